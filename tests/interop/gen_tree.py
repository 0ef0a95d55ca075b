"""Generate an ESRF-like experiment tree for `h5 recompress` tests (h5py + hdf5plugin).

Usage: gen_tree.py OUT_DIR [--files N] [--frames Z]

Layout (relative to OUT_DIR), one "dataset directory" per sample k:
  RAW_DATA/sample{k}/sample{k}_0001/sample{k}_0001.h5   container: top-level groups
      1.1, 2.1, 3.1 with technique/scan (a vlen or fixed string) and a virtual
      dataset measurement/marana -> scanNNNN/marana_0000.h5:/entry_0000/measurement/data
      (relative source name; `data` there is a soft link to the instrument's dataset).
      3.1 maps the same source as 1.1 (a duplicate the report must merge).
  RAW_DATA/sample{k}/sample{k}_0001/scan000{1,2}/marana_0000.h5   detector stacks,
      raw (contiguous or gzip-chunked), Blosc2 lz4, Blosc2 zstd:3+shuffle (the target
      codec: "already compressed"), or fake JPEG 2000 (Blosc2 codec 37) frames.
  RAW_DATA/plain/plain{j}.h5  NeXus-like files that are not VDS sources: attributes of
      every type, hard links, soft and external links, compounds, vlen strings,
      fill values, compact and contiguous data, a group `entry` with technique/scan.

Writes OUT_DIR/expected.json: the relative paths `h5 recompress --where
technique/scan:tomo --filter blosc2:zstd:3:shuffle` must put in TO COMPRESS and in
REMAINING (every .h5 file of the tree appears in exactly one).
"""
import json
import os
import sys

import h5py
import hdf5plugin
import numpy as np

TARGET = dict(cname="zstd", clevel=3, filters=hdf5plugin.Blosc2.SHUFFLE)


def args():
    out = sys.argv[1]
    files, frames = 30, 8
    a = sys.argv[2:]
    for i, x in enumerate(a):
        if x == "--files":
            files = int(a[i + 1])
        if x == "--frames":
            frames = int(a[i + 1])
    return out, files, frames


def stack(rng, z, kind):
    base = rng.poisson(200, size=(z, 64, 48)).astype(np.uint16)
    return base if kind != "f32" else base.astype(np.float32) / 7.0


def patch_jp2k(path, dset):
    """Make every Blosc2 chunk of `dset` claim user codec 37 (JPEG 2000 / Grok)."""
    with h5py.File(path, "r+") as f:
        d = f[dset]
        z = d.shape[0]
        for i in range(0, z, d.chunks[0]):
            off = (i, 0, 0)
            mask, raw = d.id.read_direct_chunk(off)
            raw = bytearray(raw)
            if raw[2:10] == b"b2frame\x00":
                start = int.from_bytes(raw[11:15], "big")
            else:
                start = 0
            raw[start + 2] = (raw[start + 2] & 0x1F) | (6 << 5)
            raw[start + 22] = 37
            d.id.write_direct_chunk(off, bytes(raw), mask)


def source(path, rng, z, kind):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = stack(rng, z, "f32" if kind == "f32" else "u16")
    with h5py.File(path, "w") as f:
        e = f.create_group("entry_0000")
        e.attrs["NX_class"] = "NXentry"
        inst = e.create_group("instrument/marana")
        kw = {}
        if kind == "gzip":
            kw = dict(chunks=(1, 64, 48), compression="gzip", compression_opts=4, shuffle=True)
        elif kind == "lz4":
            kw = dict(chunks=(1, 64, 48), **hdf5plugin.Blosc2(cname="lz4", clevel=1,
                                                            filters=hdf5plugin.Blosc2.SHUFFLE))
        elif kind in ("target", "jp2k"):
            kw = dict(chunks=(1, 64, 48), **hdf5plugin.Blosc2(**TARGET))
        elif kind == "f32":
            kw = dict(chunks=(2, 64, 48))
        d = inst.create_dataset("data", data=data, **kw)
        d.attrs["interpretation"] = "image"
        m = e.create_group("measurement")
        m["data"] = h5py.SoftLink("/entry_0000/instrument/marana/data")
        e.create_dataset("title", data="marana frames")
    if kind == "jp2k":
        patch_jp2k(path, "/entry_0000/instrument/marana/data")
    return data.shape, data.dtype


def container(path, groups):
    """groups: list of (name, scan_value, source_rel, shape, dtype, fixed_string)."""
    with h5py.File(path, "w") as f:
        for name, value, src, shape, dtype, fixed in groups:
            g = f.create_group(name)
            g.attrs["NX_class"] = "NXentry"
            if fixed:
                g.create_dataset("technique/scan", data=np.bytes_(value))
            else:
                g.create_dataset("technique/scan", data=value)
            lay = h5py.VirtualLayout(shape=shape, dtype=dtype)
            lay[:] = h5py.VirtualSource(src, "/entry_0000/measurement/data", shape=shape)
            g.create_group("measurement").create_virtual_dataset("marana", lay, fillvalue=0)
            g.create_dataset("positioners/rot", data=np.linspace(0, 180, shape[0]))


def plain(path, rng, j, z):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with h5py.File(path, "w") as f:
        e = f.create_group("entry")
        e.create_dataset("technique/scan", data="tomo" if j % 2 == 0 else "xrd")
        a = e.attrs
        a["int8"] = np.int8(-3)
        a["uint64"] = np.uint64(2**63 + 5)
        a["float32"] = np.float32(1.5)
        a["float64_arr"] = np.arange(4, dtype=">f8")
        a["bool"] = True
        a["vlen_utf8"] = "grüße"
        a.create("fixed_ascii", data=np.bytes_("abc"), dtype="S5")
        a["vlen_list"] = np.array(["a", "bb"], dtype=h5py.string_dtype())
        a["complex"] = np.complex128(1 + 2j)
        a["compound"] = np.array([(1, 2.5)], dtype=[("i", "<i4"), ("x", "<f8")])
        enum = h5py.enum_dtype({"RED": 0, "GREEN": 1}, basetype="u1")
        a.create("enum", data=np.uint8(1), dtype=enum)
        a["empty"] = h5py.Empty("f4")
        img = stack(rng, z, "u16")
        d = e.create_dataset("data/image", data=img, chunks=(2, 32, 48), fillvalue=7)
        d.attrs["units"] = "counts"
        e.create_dataset("data/contig", data=rng.normal(size=(40, 50)))
        e.create_dataset("data/small", data=np.arange(10, dtype="i2"))
        e.create_dataset("data/labels", data=np.array(["x", "yy", "zzz"], dtype=h5py.string_dtype()))
        e.create_dataset("data/table", data=np.array([(i, i * 0.5) for i in range(300)],
                                                     dtype=[("n", "<i8"), ("v", "<f4")]))
        sparse = e.create_dataset("data/sparse", shape=(64, 64), chunks=(16, 16), dtype="i4",
                                  fillvalue=-1)
        sparse[0:16, 0:16] = 5
        e["data/image_alias"] = d  # hard link: one object, two names
        e["link_soft"] = h5py.SoftLink("/entry/data/image")
        e["link_ext"] = h5py.ExternalLink("missing.h5", "/x")


def main():
    out, files, frames = args()
    rng = np.random.default_rng(1234)
    exp = {"to_compress": [], "remaining": []}
    kinds = ["raw", "gzip", "lz4", "target", "jp2k", "f32"]
    n_plain = max(2, files // 8)
    samples = max(1, -(-(files - n_plain) // 3))
    for k in range(samples):
        rel = f"RAW_DATA/sample{k}/sample{k}_0001"
        d = os.path.join(out, rel)
        groups = []
        for g, scan in ((1, "scan0001"), (2, "scan0002")):
            kind = kinds[(k + g) % len(kinds)]
            src_rel = f"{scan}/marana_0000.h5"
            shape, dtype = source(os.path.join(d, src_rel), rng, frames, kind)
            tomo = (k + g) % 3 != 0
            value = "tomo" if tomo else "dark"
            groups.append((f"{g}.1", value + ("_scan" if k % 2 else ""), src_rel, shape, dtype,
                           k % 2 == 1))
            sel = tomo and kind not in ("target", "jp2k")
            exp["to_compress" if sel else "remaining"].append(f"{rel}/{src_rel}")
        # 3.1 maps the same source as 1.1, always "tomo"
        groups.append(("3.1", "tomo", groups[0][2], groups[0][3], groups[0][4], False))
        first = f"{rel}/{groups[0][2]}"
        kind0 = kinds[(k + 1) % len(kinds)]
        if first in exp["remaining"] and kind0 not in ("target", "jp2k"):
            exp["remaining"].remove(first)
            exp["to_compress"].append(first)
        container(os.path.join(d, f"sample{k}_0001.h5"), groups)
        exp["remaining"].append(f"{rel}/sample{k}_0001.h5")
    for j in range(n_plain):
        rel = f"RAW_DATA/plain/plain{j}.h5"
        plain(os.path.join(out, rel), rng, j, frames)
        exp["to_compress" if j % 2 == 0 else "remaining"].append(rel)
    exp["to_compress"].sort()
    exp["remaining"].sort()
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
    print(f"{len(exp['to_compress']) + len(exp['remaining'])} files")


if __name__ == "__main__":
    main()
