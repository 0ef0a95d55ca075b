"""Check files written by purehdf against JSON expectations using h5py (libhdf5).

Usage: check_h5py.py FILE.h5 [FILE.h5 ...]; each FILE.h5 has FILE.h5.json next to it:
{"objects": [{"path": ..., "kind": "dataset"|"group"|"softlink", ...}]}.
Prints one line per file and a closing 'N passed, N failed' line; exits 1 on failure.
"""
import json
import sys

import h5py
import numpy as np

try:  # registers the plugin filters (Blosc, Blosc2, bitshuffle, LZ4, Zstd, BZip2...)
    import hdf5plugin  # noqa: F401
except ImportError:
    pass


def norm(x):
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if isinstance(x, (list, tuple)):
        return [norm(i) for i in x]
    return x


def check_value(where, got, exp, problems):
    if "value" in exp and norm(got) != exp["value"]:
        problems.append(f"{where}: value {norm(got)!r} != {exp['value']!r}")


def check_dtype(where, dt, exp, problems):
    if "dtype" in exp and dt.str != exp["dtype"]:
        problems.append(f"{where}: dtype {dt.str} != {exp['dtype']}")
    if "string" in exp:
        info = h5py.check_string_dtype(dt)
        want = exp["string"]
        if info is None:
            problems.append(f"{where}: not a string dtype")
        else:
            if info.encoding != want["encoding"]:
                problems.append(f"{where}: encoding {info.encoding} != {want['encoding']}")
            if info.length != want.get("length"):
                problems.append(f"{where}: length {info.length} != {want.get('length')}")
    if "enum" in exp:
        got = h5py.check_enum_dtype(dt)
        if got is None or {k: int(v) for k, v in got.items()} != exp["enum"]:
            problems.append(f"{where}: enum {got} != {exp['enum']}")
    if "fields" in exp and list(dt.names or []) != exp["fields"]:
        problems.append(f"{where}: fields {dt.names} != {exp['fields']}")


def check_attrs(where, obj, attrs, problems):
    if attrs is None:
        return
    names = sorted(obj.attrs.keys())
    if names != sorted(attrs.keys()):
        problems.append(f"{where}: attribute names {names} != {sorted(attrs.keys())}")
        return
    for name, exp in attrs.items():
        a = obj.attrs.get_id(name)
        check_dtype(f"{where}@{name}", a.dtype, exp, problems)
        if "shape" in exp and list(a.shape) != exp["shape"]:
            problems.append(f"{where}@{name}: shape {a.shape} != {exp['shape']}")
        if exp.get("null"):
            continue
        check_value(f"{where}@{name}", obj.attrs[name], exp, problems)


def check_file(path):
    with open(path + ".json") as f:
        spec = json.load(f)
    problems = []
    with h5py.File(path, "r") as f:
        for exp in spec["objects"]:
            p = exp["path"]
            kind = exp["kind"]
            if kind == "softlink":
                link = f.get(p, getlink=True)
                if not isinstance(link, h5py.SoftLink) or link.path != exp["target"]:
                    problems.append(f"{p}: soft link {link!r}")
                continue
            obj = f[p]
            if kind == "datatype":
                if not isinstance(obj, h5py.Datatype):
                    problems.append(f"{p}: not a committed datatype")
                else:
                    check_dtype(p, obj.dtype, exp, problems)
                check_attrs(p, obj, exp.get("attrs"), problems)
                continue
            if kind == "group":
                if not isinstance(obj, h5py.Group):
                    problems.append(f"{p}: not a group")
                    continue
                if "nlinks" in exp and len(obj) != exp["nlinks"]:
                    problems.append(f"{p}: {len(obj)} links != {exp['nlinks']}")
                if "members" in exp and sorted(obj.keys()) != sorted(exp["members"]):
                    problems.append(f"{p}: members differ")
                if "sample" in exp:
                    for name, val in exp["sample"].items():
                        got = norm(obj[name][()])
                        if got != val:
                            problems.append(f"{p}/{name}: {got!r} != {val!r}")
            else:
                if not isinstance(obj, h5py.Dataset):
                    problems.append(f"{p}: not a dataset")
                    continue
                check_dtype(p, obj.dtype, exp, problems)
                if "shape" in exp:
                    shape = None if obj.shape is None else list(obj.shape)
                    if shape != exp["shape"]:
                        problems.append(f"{p}: shape {shape} != {exp['shape']}")
                if "maxshape" in exp and obj.maxshape is not None:
                    if list(obj.maxshape) != exp["maxshape"]:
                        problems.append(f"{p}: maxshape {obj.maxshape} != {exp['maxshape']}")
                if "chunks" in exp:
                    chunks = None if obj.chunks is None else list(obj.chunks)
                    if chunks != exp["chunks"]:
                        problems.append(f"{p}: chunks {chunks} != {exp['chunks']}")
                if "filters" in exp:
                    plist = obj.id.get_create_plist()
                    ids = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
                    if ids != exp["filters"]:
                        problems.append(f"{p}: filters {ids} != {exp['filters']}")
                if exp.get("committed_type") and not obj.id.get_type().committed():
                    problems.append(f"{p}: datatype is not committed")
                if "nchunks" in exp and obj.id.get_num_chunks() != exp["nchunks"]:
                    problems.append(f"{p}: {obj.id.get_num_chunks()} chunks != {exp['nchunks']}")
                if exp.get("null"):
                    pass
                elif "value" in exp:
                    check_value(p, obj[()], exp, problems)
            check_attrs(p, obj, exp.get("attrs"), problems)
    return problems


def main():
    passed = failed = 0
    for path in sys.argv[1:]:
        try:
            problems = check_file(path)
        except Exception as e:  # noqa: BLE001 - report any libhdf5 failure
            problems = [f"exception: {type(e).__name__}: {e}"]
        if problems:
            failed += 1
            print(f"FAIL {path}")
            for p in problems[:20]:
                print(f"  {p}")
        else:
            passed += 1
            print(f"ok {path}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
