"""ESRF/LIMA-style fixtures and h5py reads for tests/neighbours_esrf.rs (h5py + hdf5plugin).

Usage:
  esrf_fixtures.py tree OUT_DIR          a container of virtual datasets over per-scan files
  esrf_fixtures.py lying OUT.h5          Blosc2 frames whose cd_values lie (E2)
  esrf_fixtures.py jp2k OUT.h5           Blosc2 chunks claiming codec 37 (Grok JPEG 2000, E3)
  esrf_fixtures.py read FILE DSET...     h5py's view of each dataset, as JSON lines
  esrf_fixtures.py vds FILE DSET         h5py's layout and mappings of a virtual dataset, JSON

The tree (relative to OUT_DIR):
  sample_0001/sample_0001.h5   container: groups 1.1 and 2.1 with technique/scan,
      1.1/measurement/marana = VDS -> scan0001/marana_0000.h5:/entry_0000/measurement/data
      (relative name; `data` there is a soft link to the instrument's dataset),
      1.1/instrument/marana/data = soft link to the VDS, 1.1/lost = external link to a
      missing file; 2.1/measurement/marana = VDS over scan0002 (two mappings, a strided
      source), 2.1/measurement/abs = VDS with an absolute source name.
  sample_0001/scan000{1,2}/marana_0000.h5   uint16 detector stacks (gzip, Blosc2 lz4)
  sample_0001/marana_0000.h5   a decoy: same last component as scan0001's file, other data
"""
import hashlib
import json
import os
import sys

import h5py
import hdf5plugin
import numpy as np


def stack(seed, z=6, y=32, x=24):
    rng = np.random.default_rng(seed)
    return rng.poisson(300, size=(z, y, x)).astype(np.uint16)


def detector(path, data, **kw):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with h5py.File(path, "w") as f:
        e = f.create_group("entry_0000")
        e.attrs["NX_class"] = "NXentry"
        d = e.create_dataset("instrument/marana/data", data=data, chunks=(1,) + data.shape[1:], **kw)
        d.attrs["interpretation"] = "image"
        e.create_group("measurement")["data"] = h5py.SoftLink("/entry_0000/instrument/marana/data")


def tree(out):
    root = os.path.join(out, "sample_0001")
    a, b = stack(1), stack(2)
    detector(os.path.join(root, "scan0001/marana_0000.h5"), a, compression="gzip",
             compression_opts=4, shuffle=True)
    detector(os.path.join(root, "scan0002/marana_0000.h5"), b,
             **hdf5plugin.Blosc2(cname="lz4", clevel=1, filters=hdf5plugin.Blosc2.SHUFFLE))
    detector(os.path.join(root, "marana_0000.h5"), stack(99))  # decoy
    src = "/entry_0000/measurement/data"
    with h5py.File(os.path.join(root, "sample_0001.h5"), "w") as f:
        g = f.create_group("1.1")
        g.create_dataset("technique/scan", data="tomo")
        lay = h5py.VirtualLayout(shape=a.shape, dtype=a.dtype)
        lay[:] = h5py.VirtualSource("scan0001/marana_0000.h5", src, shape=a.shape)
        g.create_group("measurement").create_virtual_dataset("marana", lay, fillvalue=7)
        g["instrument/marana/data"] = h5py.SoftLink("/1.1/measurement/marana")
        g["lost"] = h5py.ExternalLink("nowhere/missing.h5", "/entry")
        g = f.create_group("2.1")
        g.create_dataset("technique/scan", data="dark")
        lay = h5py.VirtualLayout(shape=(6,) + b.shape[1:], dtype=b.dtype)
        vs = h5py.VirtualSource("scan0002/marana_0000.h5", src, shape=b.shape)
        lay[0:3] = vs[0:6:2]
        lay[3:6] = vs[1:6:2]
        g.create_group("measurement").create_virtual_dataset("marana", lay, fillvalue=0)
        absolute = os.path.abspath(os.path.join(root, "scan0002/marana_0000.h5"))
        lay = h5py.VirtualLayout(shape=b.shape, dtype=b.dtype)
        lay[:] = h5py.VirtualSource(absolute, src, shape=b.shape)
        g["measurement"].create_virtual_dataset("abs", lay, fillvalue=0)


def frame_chunks(cname, data):
    """The stored chunks hdf5plugin writes for `data` with codec `cname`."""
    with h5py.File("tmp.h5", "w", driver="core", backing_store=False) as f:
        d = f.create_dataset("d", data=data, chunks=(1,) + data.shape[1:],
                             **hdf5plugin.Blosc2(cname=cname, clevel=5,
                                                 filters=hdf5plugin.Blosc2.SHUFFLE))
        return [d.id.read_direct_chunk((i, 0, 0)) for i in range(data.shape[0])]


def lying(out):
    """esrf's layout: the DCPL says the plugin defaults (BloscLZ), the frames hold lz4/zstd."""
    data = stack(5, z=4)
    data[3] = 0  # an all-zero frame
    chunks = frame_chunks("lz4", data[:2]) + frame_chunks("zstd", data[2:])
    with h5py.File(out, "w") as f:
        d = f.create_dataset("entry_0000/measurement/data", shape=data.shape, dtype=data.dtype,
                             chunks=(1,) + data.shape[1:],
                             **hdf5plugin.Blosc2(cname="blosclz", clevel=5,
                                                 filters=hdf5plugin.Blosc2.SHUFFLE))
        for i, (mask, raw) in enumerate(chunks):
            d.id.write_direct_chunk((i, 0, 0), raw, mask)
    info = []
    with h5py.File(out, "r") as f:
        d = f["entry_0000/measurement/data"]
        got = d[()]
        assert (got == data).all(), "h5py does not read the lying frames back"
        for i in range(data.shape[0]):
            raw = d.id.read_direct_chunk((i, 0, 0))[1]
            frame = raw[2:10] == b"b2frame\x00"
            start = int.from_bytes(raw[11:15], "big") if frame else 0
            info.append({"frame": frame, "codec": raw[start + 22],
                         "special": (raw[start + 31] >> 4) & 7})
        cd = list(d.id.get_create_plist().get_filter(0)[2])
    print(json.dumps({"chunks": info, "cd_values": cd}))


def jp2k(out):
    data = stack(7, z=3)
    with h5py.File(out, "w") as f:
        d = f.create_dataset("entry_0000/measurement/data", data=data, chunks=(1,) + data.shape[1:],
                             **hdf5plugin.Blosc2(cname="zstd", clevel=3,
                                                 filters=hdf5plugin.Blosc2.SHUFFLE))
        for i in range(data.shape[0]):
            mask, raw = d.id.read_direct_chunk((i, 0, 0))
            raw = bytearray(raw)
            start = int.from_bytes(raw[11:15], "big") if raw[2:10] == b"b2frame\x00" else 0
            raw[start + 2] = (raw[start + 2] & 0x1F) | (6 << 5)
            raw[start + 22] = 37
            d.id.write_direct_chunk((i, 0, 0), bytes(raw), mask)


def read(path, names):
    with h5py.File(path, "r") as f:
        for n in names:
            d = f[n]
            a = np.ascontiguousarray(d[()])
            print(json.dumps({"name": n, "shape": list(a.shape), "dtype": a.dtype.str,
                              "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
                              "virtual": d.is_virtual}))


def vds(path, name):
    with h5py.File(path, "r") as f:
        d = f[name]
        maps = [{"file": m.file_name, "dset": m.dset_name,
                 "vspace": [list(x) for x in m.vspace.get_select_bounds()]}
                for m in d.virtual_sources()] if d.is_virtual else []
        print(json.dumps({"virtual": d.is_virtual, "shape": list(d.shape),
                          "fill": d.fillvalue.item(), "maps": maps}))


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    {"tree": lambda: tree(rest[0]), "lying": lambda: lying(rest[0]),
     "jp2k": lambda: jp2k(rest[0]), "read": lambda: read(rest[0], rest[1:]),
     "vds": lambda: vds(rest[0], rest[1])}[cmd]()
