"""Compare the sampling index of two medh5 files (tests/medh5_index.rs).

Usage: python medh5_index_compare.py OURS REFERENCE
Prints one line per difference and `same N entries` when every /index entry
of REFERENCE exists in OURS with equal datasets (dtype, shape, value bytes),
equal group attributes (source_digest, max_coords, seed) and the same root
profiles; exits 1 on any difference.
"""
import sys

import h5py
import hdf5plugin  # noqa: F401
import numpy as np

ours, ref = sys.argv[1], sys.argv[2]
diffs = []
with h5py.File(ours, "r") as a, h5py.File(ref, "r") as b:
    pa = [str(x) for x in a.attrs.get("medh5_profiles", [])]
    pb = [str(x) for x in b.attrs.get("medh5_profiles", [])]
    if pa != pb:
        diffs.append(f"profiles {pa} != {pb}")
    ia = a.get("index")
    ib = b.get("index")
    names_a = sorted(ia) if ia is not None else []
    names_b = sorted(ib) if ib is not None else []
    if names_a != names_b:
        diffs.append(f"entries {names_a} != {names_b}")
    for n in names_b:
        if n not in names_a:
            continue
        ga, gb = ia[n], ib[n]
        for k in sorted(set(ga.attrs) | set(gb.attrs)):
            va, vb = ga.attrs.get(k), gb.attrs.get(k)
            if va is None or vb is None or type(va) is not type(vb) or va != vb:
                diffs.append(f"{n}@{k}: {va!r} != {vb!r}")
        la, lb = [], []
        ga.visititems(lambda p, o: la.append(p) if isinstance(o, h5py.Dataset) else None)
        gb.visititems(lambda p, o: lb.append(p) if isinstance(o, h5py.Dataset) else None)
        if sorted(la) != sorted(lb):
            diffs.append(f"{n}: datasets {sorted(la)} != {sorted(lb)}")
        for p in sorted(set(la) & set(lb)):
            da, db = ga[p], gb[p]
            if da.dtype != db.dtype or da.shape != db.shape:
                diffs.append(f"{n}/{p}: {da.dtype}{da.shape} != {db.dtype}{db.shape}")
                continue
            xa, xb = da[()], db[()]
            if np.asarray(xa).tobytes() != np.asarray(xb).tobytes():
                diffs.append(f"{n}/{p}: values differ")
            if da.chunks != db.chunks or da.compression != db.compression:
                diffs.append(f"{n}/{p}: layout {da.chunks}/{da.compression} != {db.chunks}/{db.compression}")
            if "digest" in da.attrs:
                diffs.append(f"{n}/{p}: carries a digest")
for d in diffs:
    print(d)
print(f"same {len(names_b)} entries" if not diffs else f"{len(diffs)} differences")
sys.exit(1 if diffs else 0)
