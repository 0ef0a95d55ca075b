"""Oracle side of tests/typed_api.rs (h5py + hdf5plugin, libhdf5's own code).

make OUT.h5 OUT.json: write datasets of many stored types and byte orders,
  and the values numpy gives for a list of strided slices of each.
readback FILE.h5: print, as JSON, every dataset's values (flattened, as
  Python numbers or strings) and every attribute, for a file purehdf wrote.
shown OUT.h5 OUT.json: write datasets of many types, filters and links and
  attributes of many kinds, and how each shows: the dtype as h5py prints
  it (`dtype.str`, `str(dtype)` for compounds and subarrays, `object` for
  `O`), each attribute's value as Python prints `attrs[name]` (numpy's repr
  for arrays, `str` for numpy scalars), each filter pipeline in purehdf's
  constructor spelling, and the names `visititems` visits.
"""
import json
import sys

import h5py
import hdf5plugin
import numpy as np


def plain(a):
    a = np.asarray(a)
    if a.dtype.kind == "S":
        return [x.decode() for x in a.ravel()]
    if a.dtype.kind == "O":
        return [x.decode() if isinstance(x, bytes) else x for x in a.ravel()]
    return a.ravel().tolist()


def make(out, expect):
    cases = []
    with h5py.File(out, "w", libver="earliest") as f:
        ar = np.arange
        data = {
            "be_i2": (ar(35).reshape(5, 7) * 7 - 100).astype(">i2"),
            "le_u4": (ar(10, dtype=np.uint64) * 400_000_000).astype("<u4"),
            "be_f8": (ar(20).reshape(4, 5) / 8 - 1).astype(">f8"),
            "f2": np.array([0.5, -1.25, 65504, 1e-3, 2, 3], dtype="<f2"),
            "be_i8": (ar(12).reshape(3, 4) * -123456789).astype(">i8"),
            "blosc2": (ar(6 * 8 * 10).reshape(6, 8, 10) * 5 - 1000).astype("<i2"),
        }
        f.create_dataset("be_i2", data=data["be_i2"], chunks=(2, 3), compression="gzip", shuffle=True)
        f.create_dataset("le_u4", data=data["le_u4"])
        f.create_dataset("be_f8", data=data["be_f8"])
        f.create_dataset("f2", data=data["f2"], chunks=(4,), fletcher32=True)
        f.create_dataset("be_i8", data=data["be_i8"], chunks=(2, 2),
                         **hdf5plugin.Zstd(clevel=3))
        f.create_dataset("blosc2", data=data["blosc2"], chunks=(3, 4, 5),
                         **hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.BITSHUFFLE))
        slices = {
            "be_i2": [[[0, 5, 2], [1, 7, 3]], [[4, 5, 1]], [2]],
            "le_u4": [[[1, 10, 4]], [[0, 10, 1]]],
            "be_f8": [[[0, 4, 3], [0, 5, 2]], [1, 4]],
            "f2": [[[0, 6, 1]]],
            "be_i8": [[[0, 3, 2], [1, 4, 2]]],
            "blosc2": [[[1, 6, 2], 3, [0, 10, 3]], [[0, 6, 1], [0, 8, 7], [9, 10, 1]]],
        }
        for name, sls in slices.items():
            for sl in sls:
                idx = tuple(slice(*s) if isinstance(s, list) else s for s in sl)
                cases.append({"dataset": name, "slice": sl, "values": plain(f[name][idx])})
        f.create_dataset("fixed", data=np.array([b"ab", b"abcde", b""], dtype="S5"))
        f.create_dataset("vlen", data=["αβ", "bc", ""], dtype=h5py.string_dtype())
        cdt = np.dtype([("x", "<i4"), ("y", ">f8"), ("tag", "S4")])
        comp = np.array([(i * 3 - 4, i / 4, b"t%d" % i) for i in range(4)], dtype=cdt)
        f.create_dataset("compound", data=comp)
        f["be_f8"].attrs["scale"] = np.float64(0.125)
        f["be_f8"].attrs["dims"] = np.array([4, 5], dtype=">i4")
        f["be_f8"].attrs["units"] = "mm"
        f["be_f8"].attrs["code"] = np.bytes_(b"XYZ")
        for name in ["fixed", "vlen"]:
            cases.append({"dataset": name, "strings": plain(f[name][()])})
        for field in ["x", "y", "tag"]:
            cases.append({"dataset": "compound", "field": field, "values": plain(comp[field])})
    with open(expect, "w") as fh:
        json.dump(cases, fh)


def readback(path):
    out = {"datasets": {}, "attrs": {}, "filters": {}}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out["datasets"][name] = plain(obj[()])
                out["filters"][name] = sorted(str(k) for k in obj._filters.keys())
            for k, v in obj.attrs.items():
                out["attrs"][f"{name}@{k}"] = v.decode() if isinstance(v, bytes) else (
                    v if isinstance(v, str) else plain(v))
        f.visititems(visit)
    print(json.dumps(out))


def shown_dtype(dt):
    if dt.kind == "O":
        return "object"
    if dt.names is not None or dt.subdtype is not None:
        return str(dt)
    return dt.str


def shown_value(v):
    if isinstance(v, (np.ndarray, str, h5py.Empty, h5py.Reference)):
        return repr(v)
    if isinstance(v, bytes):
        return repr(bytes(v))
    return str(v)


def shown(out, expect):
    res = {"dtypes": {}, "attrs": {}, "filters": {}, "visit": []}
    with h5py.File(out, "w") as f:
        dts = {
            "i1": "i1", "be_i2": ">i2", "u1": "u1", "le_u8": "<u8", "f2": "<f2",
            "be_f4": ">f4", "f8": "<f8", "c8": "<c8", "c16": "<c16", "bool": "?",
            "s10": "S10", "vstr": h5py.string_dtype(), "vascii": h5py.string_dtype("ascii"),
            "vlen_i4": h5py.vlen_dtype("i4"),
            "enum": h5py.enum_dtype({"R": 0, "G": 1, "B": 2}, basetype="u1"),
            "enum_be": h5py.enum_dtype({"A": 0, "B": 300}, basetype=">i2"),
            "opaque": np.dtype("V8"), "ref": h5py.ref_dtype, "regref": h5py.regionref_dtype,
            "compound": np.dtype([("id", "<i4"), ("x", "<f8")]),
            "compound_mixed": np.dtype([("b", "?"), ("s", "S5"), ("name", h5py.string_dtype()),
                                        ("v", "<f4", (3,)), ("p", [("q", ">u8")])]),
            "compound_gap": np.dtype({"names": ["b", "a"], "formats": ["<f8", "<i4"],
                                      "offsets": [8, 0], "itemsize": 24}),
            "array": np.dtype(("<f4", (3,))), "array2": np.dtype(("u1", (2, 3))),
            "array_c": np.dtype(([("a", "<i4")], (2,))),
        }
        for name, dt in dts.items():
            ds = f.create_dataset("types/" + name, shape=(2,), dtype=dt)
            res["dtypes"]["types/" + name] = shown_dtype(ds.dtype)
        a = f.create_group("attrs").attrs
        a["int"] = np.int64(7)
        a["i1"] = np.int8(-5)
        a["f8"] = 0.125
        a["f4"] = np.float32(0.1)
        a["f2"] = np.float16(0.1)
        a["big"] = 1e16
        a["tiny"] = 1.5e-7
        a["neg0"] = -0.0
        a["bool"] = True
        a["c16"] = 1 + 2j
        a["str"] = "mm"
        a["ustr"] = "αβ γ"
        a["bytes"] = np.bytes_(b"XYZ")
        a["quote"] = np.bytes_(b"it's")
        a["i4s"] = np.array([4, 5], dtype=">i4")
        a["u2s"] = np.array([1, 10, 100], dtype="<u2")
        a["f8s"] = np.array([0.75, 0.75])
        a["f8mix"] = np.array([1.0, 2.5, 0.75])
        a["f4s"] = np.array([2.5, 0.75], dtype="<f4")
        a["sci"] = np.array([1e-5, 1.0, 123.25])
        a["nan"] = np.array([np.nan, 1.5, -np.inf])
        a["bools"] = np.array([True, False])
        a["strs"] = np.array(["a", "bc"], dtype=h5py.string_dtype())
        a["fixed"] = np.array([b"ab", b"abcde"])
        a["m"] = np.arange(12).reshape(3, 4)
        a["wrap"] = np.arange(30.0) / 7
        a["long"] = np.arange(2000, dtype="<f4")
        a["long2d"] = np.arange(3000).reshape(50, 60)
        a["empty"] = np.array([], dtype="<f4")
        a["null"] = h5py.Empty("<i8")
        a["cplx"] = np.array([1 + 2j, 3.5 - 1j])
        cdt = np.dtype([("a", "<i4"), ("b", "<f8")])
        a["comp"] = np.array([(1, 2.5), (22, 3.0)], dtype=cdt)
        a["comp1"] = np.array((1, 3.0), dtype=cdt)[()]
        a["sub"] = np.array([(1, [1.0, 2.5]), (2, [3.0, 4.0])],
                            dtype=[("a", "i1"), ("v", "<f4", (2,))])
        a.create("enum", np.array([0, 2], dtype="u1"),
                 dtype=h5py.enum_dtype({"R": 0, "G": 1, "B": 2}, basetype="u1"))
        a["opaque"] = np.void(b"\x01\x02a")
        a.create("vlen", np.array([np.array([1, 2], dtype="i4"), np.array([3], dtype="i4")],
                                  dtype=object), dtype=h5py.vlen_dtype("i4"))
        a["ref"] = f.ref
        a.create("arr", np.array([[1, 2, 3], [4, 5, 6]], dtype="<f4"), dtype=np.dtype(("<f4", (3,))))
        for k in a.keys():
            res["attrs"][k] = shown_value(a[k])
        vol = np.arange(16 * 16, dtype="<i2").reshape(16, 16)
        pipes = {
            "gzip": (dict(compression="gzip", compression_opts=4, shuffle=True, fletcher32=True),
                     ["shuffle", "deflate(4)", "fletcher32"]),
            "lzf": (dict(compression="lzf"), ["lzf"]),
            "szip": (dict(compression="szip", compression_opts=("nn", 8)), ["szip(nn, 8)"]),
            "scaleoffset": (dict(scaleoffset=2), ["scaleoffset(int, 2)"]),
            "blosc2": (hdf5plugin.Blosc2(cname="zstd", clevel=5, filters=hdf5plugin.Blosc2.BITSHUFFLE),
                       ["blosc2(zstd, 5, bitshuffle)"]),
            "blosc": (hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE),
                      ["blosc(lz4, 5, shuffle)"]),
            "bitshuffle": (hdf5plugin.Bitshuffle(cname="lz4"), ["bitshuffle(lz4)"]),
            "bitshuffle_zstd": (hdf5plugin.Bitshuffle(cname="zstd", clevel=3), ["bitshuffle(zstd, 3)"]),
            "zstd": (hdf5plugin.Zstd(clevel=3), ["zstd(3)"]),
            "lz4": (hdf5plugin.LZ4(), ["lz4"]),
            "bzip2": (hdf5plugin.BZip2(blocksize=9), ["bzip2(9)"]),
            "sz": (hdf5plugin.SZ(absolute=0.1), None),
        }
        for name, (kw, want) in pipes.items():
            ds = f.create_dataset("filters/" + name, data=vol, chunks=(8, 8), **kw)
            if want is None:
                want = [f"filter {k} [{', '.join(str(int(v)) for v in cd)}]"
                        for k, cd in ds._filters.items()]
            res["filters"]["filters/" + name] = want
        g = f.create_group("links")
        g["hard"] = f["types/i1"]
        g["up"] = h5py.SoftLink("/links")
        g["loop"] = h5py.SoftLink("/links/loop")
        g["back"] = f["attrs"]
        g["self"] = f["/"]
        t = f.create_group("links/sub")
        t["parent"] = g
        f["types/a_named"] = np.dtype("<i4")
        f.visititems(lambda name, obj: res["visit"].append(name) and None)
    with open(expect, "w") as fh:
        json.dump(res, fh)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "shown":
        shown(sys.argv[2], sys.argv[3])
    else:
        readback(sys.argv[2])
