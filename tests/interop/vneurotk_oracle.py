"""h5py (and, where installed, VneuroTK 0.0.1) side of tests/neighbours_vneurotk.rs.

Subcommands (each prints one JSON document on stdout):
  gen DIR             schema-0 dense, schema-0 COO and schema-1 recordings as
                      h5py writes them (every kind of value the schemas use)
  expected FILE CORPUS  h5py's description of FILE (the corpus make_expected view)
  same A B            compare two files value by value and dtype by dtype
  mutants DIR         the header-gate matrix: 8 damaged v1 headers, a legacy
                      file, a fixed-length ASCII magic
  seq FILE            check the typed scalar sequence /ids written by purehdf
  chunks FILE         h5py's view of /neuro written by purehdf's chunk policy
  vtk_write DIR       recordings saved by vneurotk, and the values vneurotk reads back
  vtk_read FILE       the values vneurotk reads from FILE (lazily, then eagerly)
"""
import hashlib
import json
import math
import os
import sys

import h5py
import numpy as np

SEQ = [1, "1", True, 1.5, -0.0, 0.1, "a/b", "\u00fc", ""]
CODES = {bool: 1, int: 2, float: 3, str: 4}


def sha(a):
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "iuf" and a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return hashlib.sha256(a.tobytes()).hexdigest()


def neuro_array(shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * 0.25 - 3.0).reshape(shape).astype(np.float32)


def seq_token(v):
    code = CODES[type(v)]
    if isinstance(v, bool):
        return code, "1" if v else "0"
    if isinstance(v, float):
        return code, v.hex()
    return code, str(v)


def write_seq(group, name, values):
    g = group.create_group(name)
    g.attrs["encoding"] = "vneurotk_scalar_v1"
    toks = [seq_token(v) for v in values]
    g.create_dataset("types", data=np.asarray([t[0] for t in toks], dtype=np.uint8))
    g.create_dataset("values", data=np.asarray([t[1] for t in toks], dtype=h5py.string_dtype("utf-8")))
    return g


def read_seq(g):
    out = []
    for c, t in zip(g["types"][:], g["values"][:]):
        t = t.decode("utf-8") if isinstance(t, bytes) else str(t)
        c = int(c)
        out.append({1: lambda: t == "1", 2: lambda: int(t), 3: lambda: float.fromhex(t),
                    4: lambda: t, 5: lambda: None}[c]())
    return out


def gen(d):
    os.makedirs(d, exist_ok=True)
    labels = np.array(["", "cat", "", "dog", "\u00fc"], dtype=object)
    with h5py.File(os.path.join(d, "v0_dense.h5"), "w") as f:
        f.create_dataset("neuro", data=neuro_array((50, 4)))
        f.attrs["neuro_format"] = "dense"
        f.create_dataset("stim_labels", data=labels.astype(h5py.string_dtype()))
        f.attrs["stim_labels_is_str"] = True
        f.attrs["stim_labels_shape"] = [5]
        for n in ("trial", "trial_starts", "trial_ends", "vision_onsets"):
            f.create_dataset(n, data=np.arange(5, dtype=np.float64))
        f.attrs["data_mode"] = "continues"
        ni = f.create_group("neuro_info")
        ni.attrs["sfreq"] = 250.0
        ni.attrs["ch_names"] = np.array(["a", "b", "c", "d"], dtype=h5py.string_dtype())
        ni.attrs["shape"] = np.array([50, 4])
        vi = f.create_group("vision_info")
        vi.attrs["n_stim"] = 3
        vi.create_dataset("stim_ids", data=np.array(["cat", "dog", "\u00fc"], dtype=h5py.string_dtype()))
        ti = f.create_group("trial_info")
        ti.attrs["baseline"] = np.array([0, 10])
        ti.attrs["trial_window"] = np.array([-0.1, 0.5])
        tm = f.create_group("trial_meta")
        tm.create_dataset("rt", data=np.array([0.5, 0.25, 0.125]))
        tm.create_dataset("ok", data=np.array([True, False, True]))
        tm.create_dataset("cond", data=["a", "b", "c"], dtype=h5py.string_dtype())
        db = f.create_group("stimuli_db")
        db.create_dataset("1", data=np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
        db["1"].attrs["kind"] = "array"
        db["1"].attrs["key_type"] = "int"
    with h5py.File(os.path.join(d, "v0_coo.h5"), "w") as f:
        f.create_dataset("neuro_row", data=np.array([0, 3, 5], dtype=np.int32))
        f.create_dataset("neuro_col", data=np.array([1, 0, 2], dtype=np.int32))
        f.create_dataset("neuro_data", data=np.array([1.5, -2.0, 3.25]))
        f.attrs["neuro_format"] = "coo"
        f.attrs["neuro_shape"] = [2, 3, 3]
        f.attrs["neuro_dtype"] = "float64"
        f.create_dataset("stim_labels", data=np.array([1.0, np.nan, 2.0]))
        f.attrs["stim_labels_is_str"] = False
        f.attrs["stim_labels_shape"] = [3]
        f.attrs["data_mode"] = "epochs"
    with h5py.File(os.path.join(d, "v1.h5"), "w") as f:
        f.attrs["vneurotk_format"] = "recording"
        f.attrs["vneurotk_schema_version"] = np.int64(1)
        f.attrs["writer_version"] = "0.1.0.dev0"
        f.attrs["data_mode"] = "epochs"
        f.attrs["neuro_format"] = "dense"
        f.attrs["stim_labels_encoding"] = "typed_scalars"
        f.attrs["stim_labels_shape"] = np.array([2, 3], dtype=np.int64)
        f.attrs["has_images"] = True
        f.attrs["legacy_unit"] = np.bytes_(b"uV")
        f.create_dataset("neuro", data=neuro_array((2, 300, 64)), chunks=(2, 150, 64),
                         compression="gzip", compression_opts=4, shuffle=True)
        for n in ("trial", "trial_starts", "trial_ends", "vision_onsets"):
            f.create_dataset(n, data=np.arange(2, dtype=np.int64))
        ni = f.create_group("neuro_info")
        ni.attrs["shape"] = np.array([2, 300, 64], dtype=np.int64)
        ni.attrs["sfreq"] = 1000.0
        ni.attrs["ch_names"] = np.array([f"ch{i}" for i in range(64)], dtype=h5py.string_dtype())
        vi = f.create_group("vision_info")
        vi.attrs["n_stim"] = np.int64(2)
        write_seq(vi, "stim_ids", [7, "7"])
        write_seq(f, "stim_labels", SEQ[:6])
        tm = f.create_group("trial_meta")
        tm.attrs["encoding"] = "pandas_v1"
        write_seq(tm, "column_index", ["rt", "cond"])
        write_seq(tm, "index", [0, 1])
        cols = tm.create_group("columns")
        c0 = cols.create_group("0")
        c0.attrs["kind"] = "numpy"
        c0.create_dataset("values", data=np.array([0.5, 0.75]))
        c1 = cols.create_group("1")
        c1.attrs["kind"] = "categorical"
        c1.attrs["ordered"] = False
        write_seq(c1, "categories", ["a", "b"])
        c1.create_dataset("codes", data=np.array([1, 0], dtype=np.int8))
        db = f.create_group("stimuli_db")
        db.attrs["encoding"] = "ordered_entries_v1"
        for i, sid in enumerate([7, "7"]):
            e = db.create_group(str(i))
            write_seq(e, "id", [sid])
            img = e.create_dataset("image", data=np.full((4, 4, 3), i, dtype=np.uint8))
            img.attrs["kind"] = "array"
        f.create_dataset("provenance", data="compact\u00fc", dtype=h5py.string_dtype())
    print(json.dumps({"ok": True}))


def expected(path, corpus):
    sys.path.insert(0, corpus)
    import make_expected
    print(json.dumps(make_expected.inspect_file(path)))


def norm(v):
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            return [norm(x) for x in v.tolist()]
        return [norm(x) for x in v.tolist()] if v.ndim else norm(v.item())
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def dtype_desc(dt):
    s = h5py.check_string_dtype(dt)
    e = h5py.check_enum_dtype(dt)
    return [dt.str, None if s is None else [s.encoding, s.length], None if e is None else sorted(e.items())]


def same(a, b):
    diffs, checked = [], 0
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        items = []
        fa.visititems(lambda n, o: items.append(n))
        for n in [""] + items:
            oa = fa[n] if n else fa
            ob = fb.get(n) if n else fb
            if ob is None:
                diffs.append(f"{n}: missing")
                continue
            for k in oa.attrs:
                checked += 1
                if k not in ob.attrs:
                    diffs.append(f"{n}@{k}: missing")
                    continue
                va, vb = oa.attrs[k], ob.attrs[k]
                if norm(va) != norm(vb) or type(va) is not type(vb):
                    diffs.append(f"{n}@{k}: {va!r} != {vb!r}")
                ta = oa.attrs.get_id(k).dtype
                tb = ob.attrs.get_id(k).dtype
                if dtype_desc(ta) != dtype_desc(tb):
                    diffs.append(f"{n}@{k}: dtype {dtype_desc(ta)} != {dtype_desc(tb)}")
            if isinstance(oa, h5py.Dataset):
                checked += 1
                if dtype_desc(oa.dtype) != dtype_desc(ob.dtype) or oa.shape != ob.shape:
                    diffs.append(f"{n}: {dtype_desc(oa.dtype)} {oa.shape} != {dtype_desc(ob.dtype)} {ob.shape}")
                elif norm(oa[()]) != norm(ob[()]):
                    diffs.append(f"{n}: values differ")
    print(json.dumps({"checked": checked, "diffs": diffs}))


def mutants(d):
    os.makedirs(d, exist_ok=True)

    def base(name):
        f = h5py.File(os.path.join(d, name + ".h5"), "w")
        f.attrs["vneurotk_format"] = "recording"
        f.attrs["vneurotk_schema_version"] = np.int64(1)
        f.attrs["writer_version"] = "0.1.0"
        return f

    cases = {
        "no_magic": lambda f: f.attrs.__delitem__("vneurotk_format"),
        "no_version": lambda f: f.attrs.__delitem__("vneurotk_schema_version"),
        "wrong_magic": lambda f: f.attrs.__setitem__("vneurotk_format", "dataset"),
        "version_text": lambda f: f.attrs.__setitem__("vneurotk_schema_version", "one"),
        "version_2": lambda f: f.attrs.__setitem__("vneurotk_schema_version", np.int64(2)),
        "version_bool": lambda f: f.attrs.__setitem__("vneurotk_schema_version", True),
        "version_array": lambda f: f.attrs.__setitem__("vneurotk_schema_version", np.array([1])),
        "no_writer_version": lambda f: f.attrs.__delitem__("writer_version"),
        "version_float": lambda f: f.attrs.__setitem__("vneurotk_schema_version", 1.0),
        "version_u8": lambda f: f.attrs.__setitem__("vneurotk_schema_version", np.uint8(1)),
        "magic_fixed_ascii": lambda f: f.attrs.create("vneurotk_format", np.bytes_(b"recording")),
    }
    for name, edit in cases.items():
        with base(name) as f:
            edit(f)
    with h5py.File(os.path.join(d, "legacy.h5"), "w") as f:
        f.create_dataset("neuro", data=np.zeros((3, 2)))
        f.attrs["data_mode"] = "continues"
    print(json.dumps(sorted(cases) + ["legacy"]))


def seq(path):
    out = {"problems": []}
    with h5py.File(path, "r") as f:
        g = f["ids"]
        if g.attrs["encoding"] != "vneurotk_scalar_v1":
            out["problems"].append("encoding")
        if g["types"].dtype != np.uint8:
            out["problems"].append(f"types dtype {g['types'].dtype}")
        s = h5py.check_string_dtype(g["values"].dtype)
        if s is None or s.encoding != "utf-8" or s.length is not None:
            out["problems"].append(f"values dtype {g['values'].dtype}")
        got = read_seq(g)
        for a, b in zip(got, SEQ):
            if type(a) is not type(b) or a != b or (isinstance(a, float) and math.copysign(1, a) != math.copysign(1, b)):
                out["problems"].append(f"{a!r} != {b!r}")
        if len(got) != len(SEQ):
            out["problems"].append("length")
        ours_types = g["types"][:].tobytes()
        ours_values = [v.decode("utf-8") for v in g["values"][:]]
    ref = path + ".ref.h5"
    with h5py.File(ref, "w") as f:
        write_seq(f, "ids", SEQ)
    with h5py.File(ref, "r") as f:
        if f["ids/types"][:].tobytes() != ours_types:
            out["problems"].append("types bytes differ")
        if [v.decode("utf-8") for v in f["ids/values"][:]] != ours_values:
            out["problems"].append("values differ")
        out["values"] = ours_values
    print(json.dumps(out))


def chunks(path):
    with h5py.File(path, "r") as f:
        d = f["neuro"]
        want = neuro_array(d.shape)
        out = {"chunks": list(d.chunks), "compression": d.compression,
               "opts": d.compression_opts, "shuffle": d.shuffle,
               "equal": bool(np.array_equal(d[()], want)) and d.dtype == want.dtype}
        ref = path + ".ref.h5"
        with h5py.File(ref, "w") as g:
            r = g.create_dataset("neuro", data=want, chunks=d.chunks, compression="gzip",
                                 compression_opts=4, shuffle=True)
            n = d.id.get_num_chunks()
            same_bytes = 0
            for i in range(n):
                info = d.id.get_chunk_info(i)
                a = d.id.read_direct_chunk(info.chunk_offset)[1]
                b = r.id.read_direct_chunk(info.chunk_offset)[1]
                same_bytes += a == b
        out["chunks_total"] = n
        out["chunks_same_bytes"] = same_bytes
    print(json.dumps(out))


def vtk_values(path):
    import vneurotk
    bd = vneurotk.read(path)
    lazy = bd.neuro_info.get("shape")
    neuro = np.asarray(bd.load().neuro.data if hasattr(bd.neuro, "data") else bd.neuro)
    labels = bd.stim_labels
    return {
        "lazy_shape": [int(x) for x in lazy] if lazy is not None else None,
        "neuro_shape": list(neuro.shape),
        "neuro_dtype": str(neuro.dtype),
        "neuro_sha": sha(neuro),
        "data_mode": bd.data_mode,
        "neuro_info": {k: norm(v) for k, v in bd.neuro_info.items()},
        "stim_labels": None if labels is None else norm(np.asarray(labels, dtype=object).ravel()),
        "vision_info": {k: norm(v) for k, v in (bd.vision_info or {}).items()},
        "trial_info": {k: norm(v) for k, v in (bd.trial_info or {}).items()},
        "trial": None if bd.trial is None else norm(np.asarray(bd.trial)),
        "trial_starts": None if bd.trial_starts is None else norm(np.asarray(bd.trial_starts)),
        "trial_meta": None if bd.trial_meta is None else {c: norm(bd.trial_meta[c].to_numpy()) for c in bd.trial_meta.columns},
    }


def vtk_write(d):
    import vneurotk
    os.makedirs(d, exist_ok=True)
    out = {}
    rng = np.random.default_rng(3)
    neuro = rng.standard_normal((400, 6)).astype(np.float32)
    bd = vneurotk.BaseData(neuro, dict(sfreq=100.0, ch_names=[f"c{i}" for i in range(6)]))
    bd.configure(stim_ids=np.array(["cat", "dog", "cat"]), trial_window=[-5, 20],
                 vision_onsets=np.array([50, 150, 300]))
    p = os.path.join(d, "vtk_continuous.h5")
    bd.save(p)
    out["continuous"] = vtk_values(p)
    ep = np.zeros((4, 10, 3), dtype=np.float64)
    ep[1, 2, 0] = 1.5
    ep[3, 9, 2] = -4.0
    be = vneurotk.BaseData(ep, dict(sfreq=50.0), data_mode="epochs")
    be.configure(stim_ids=np.array([3, 1, 2, 1]))
    p = os.path.join(d, "vtk_epochs_coo.h5")
    be.save(p)
    out["epochs_coo"] = vtk_values(p)
    print(json.dumps(out))


def vtk_read(path):
    print(json.dumps(vtk_values(path)))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"gen": gen, "expected": expected, "same": same, "mutants": mutants, "seq": seq,
     "chunks": chunks, "vtk_write": vtk_write, "vtk_read": vtk_read}[cmd](*args)
