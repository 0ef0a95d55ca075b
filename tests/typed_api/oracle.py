"""Oracle side of tests/typed_api.rs (h5py + hdf5plugin, libhdf5's own code).

make OUT.h5 OUT.json: write datasets of many stored types and byte orders,
  and the values numpy gives for a list of strided slices of each.
readback FILE.h5: print, as JSON, every dataset's values (flattened, as
  Python numbers or strings) and every attribute, for a file purehdf wrote.
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


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    else:
        readback(sys.argv[2])
