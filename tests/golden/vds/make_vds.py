"""Write the small virtual-dataset (VDS) test files of purehdf's tests/golden/vds/.

Run from anywhere with the oracle venv:
    .oracle-venv/bin/python tests/golden/vds/make_vds.py

Every file here is written by h5py/libhdf5 (versions in ../VERSIONS.txt), and
expected.json records, for each virtual dataset, what h5py reads from it (shape,
numpy dtype, values in C order) so the Rust test needs no Python.
The data are synthetic; the files and this script are under the project's licence.
"""
import json
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
h5s = h5py.h5s


def path(name):
    return os.path.join(HERE, name)


def sources():
    for i, name in enumerate(["src_a.h5", "src_b.h5"]):
        with h5py.File(path(name), "w", libver="latest") as f:
            f["data"] = (np.arange(24, dtype="<i4").reshape(4, 6) + 100 * (i + 1))
    # printf sources p_0.h5 .. p_2.h5 (p_3.h5 deliberately missing, p_4.h5 present)
    for i in [0, 1, 2, 4]:
        with h5py.File(path(f"p_{i}.h5"), "w", libver="latest") as f:
            f["d"] = np.full((2, 3), i, dtype="<f8") + np.arange(6).reshape(2, 3) / 10
    # a growable source for an unlimited (non-printf) mapping
    with h5py.File(path("grow.h5"), "w", libver="latest") as f:
        d = f.create_dataset("g", shape=(5, 4), maxshape=(None, 4), dtype="<i2", chunks=(2, 4))
        d[...] = np.arange(20, dtype="<i2").reshape(5, 4)
    for name in ["p_3.h5", "missing.h5"]:
        if os.path.exists(path(name)):
            os.remove(path(name))


def several():
    """Two sources, a strided mapping, a missing source, a fill value."""
    layout = h5py.VirtualLayout(shape=(10, 6), dtype="<i4")
    layout[0:4, :] = h5py.VirtualSource("src_a.h5", "data", shape=(4, 6))
    # every other row of src_b into rows 4..6, its columns reversed order is not
    # expressible; take columns 1..5
    layout[4:6, 0:4] = h5py.VirtualSource("src_b.h5", "data", shape=(4, 6))[0:4:2, 1:5]
    layout[6:8, :] = h5py.VirtualSource("missing.h5", "data", shape=(2, 6))
    with h5py.File(path("vds_several.h5"), "w", libver="latest") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-7)


def printf_mapping():
    """Source names with %b: blocks of 2 rows from p_0.h5, p_1.h5, ... until one is missing."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    vspace = h5s.create_simple((0, 3), (h5s.UNLIMITED, 3))
    vspace.select_hyperslab((0, 0), (h5s.UNLIMITED, 1), stride=(2, 1), block=(2, 3))
    sspace = h5s.create_simple((2, 3))
    dcpl.set_virtual(vspace, b"p_%b.h5", b"d", sspace)
    dcpl.set_fill_value(np.array(-1.5, dtype="<f8"))
    with h5py.File(path("vds_printf.h5"), "w", libver="latest") as f:
        space = h5s.create_simple((0, 3), (h5s.UNLIMITED, 3))
        h5py.h5d.create(f.id, b"v", h5py.h5t.IEEE_F64LE, space, dcpl=dcpl)


def unlimited_mapping():
    """Unlimited block in both selections: the extent follows grow.h5's rows."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    vspace = h5s.create_simple((1, 4), (h5s.UNLIMITED, 4))
    vspace.select_hyperslab((0, 0), (1, 1), block=(h5s.UNLIMITED, 4))
    sspace = h5s.create_simple((5, 4), (h5s.UNLIMITED, 4))
    sspace.select_hyperslab((0, 0), (1, 1), block=(h5s.UNLIMITED, 4))
    dcpl.set_virtual(vspace, b"grow.h5", b"g", sspace)
    with h5py.File(path("vds_unlimited.h5"), "w", libver="latest") as f:
        space = h5s.create_simple((1, 4), (h5s.UNLIMITED, 4))
        h5py.h5d.create(f.id, b"v", h5py.h5t.STD_I16LE, space, dcpl=dcpl)


def same_file_points_irregular():
    """Source in the same file ('.'), irregular hyperslabs on both sides, i32 -> f64."""
    with h5py.File(path("vds_same_file.h5"), "w", libver="latest") as f:
        f["src"] = np.arange(16, dtype="<i4").reshape(4, 4)
        # whole-source copy through the same-file name "."
        layout = h5py.VirtualLayout(shape=(4, 4), dtype="<f8")
        layout[...] = h5py.VirtualSource(".", "src", shape=(4, 4))
        f.create_virtual_dataset("as_f64", layout, fillvalue=0.5)
        # 5 elements of the source (two boxes) -> the union of two boxes of the virtual space
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        vspace = h5s.create_simple((3, 5))
        vspace.select_hyperslab((0, 0), (1, 1), block=(1, 3))
        vspace.select_hyperslab((2, 3), (1, 1), block=(1, 2), op=h5s.SELECT_OR)
        sspace = h5s.create_simple((4, 4))
        sspace.select_hyperslab((3, 1), (1, 1), block=(1, 3))
        sspace.select_hyperslab((0, 2), (1, 1), block=(2, 1), op=h5s.SELECT_OR)
        dcpl.set_virtual(vspace, b".", b"/src", sspace)
        dcpl.set_fill_value(np.array(-1, dtype="<i4"))
        space = h5s.create_simple((3, 5))
        h5py.h5d.create(f.id, b"irregular", h5py.h5t.STD_I32LE, space, dcpl=dcpl)


def chain_and_cycle():
    """A VDS whose source is a VDS; two VDSs that name each other (a cycle)."""
    layout = h5py.VirtualLayout(shape=(2, 6), dtype="<i4")
    layout[...] = h5py.VirtualSource("vds_several.h5", "v", shape=(10, 6))[3:5, :]
    with h5py.File(path("vds_chain.h5"), "w", libver="latest") as f:
        f.create_virtual_dataset("v", layout, fillvalue=3)
    for me, other in [("vds_cycle_a.h5", "vds_cycle_b.h5"), ("vds_cycle_b.h5", "vds_cycle_a.h5")]:
        layout = h5py.VirtualLayout(shape=(3,), dtype="<i4")
        layout[...] = h5py.VirtualSource(other, "v", shape=(3,))
        with h5py.File(path(me), "w", libver="latest") as f:
            f.create_virtual_dataset("v", layout, fillvalue=0)


def expected():
    out = {}
    cwd = os.getcwd()
    os.chdir(HERE)  # libhdf5 also tries source names relative to the working directory
    try:
        for name, dset in [
            ("vds_several.h5", "v"),
            ("vds_printf.h5", "v"),
            ("vds_unlimited.h5", "v"),
            ("vds_same_file.h5", "as_f64"),
            ("vds_same_file.h5", "irregular"),
            ("vds_chain.h5", "v"),
        ]:
            with h5py.File(name, "r") as f:
                d = f[dset]
                a = d[...]
                out[f"{name}:{dset}"] = {
                    "shape": list(a.shape),
                    "dtype": a.dtype.str,
                    "values": a.ravel().tolist(),
                }
    finally:
        os.chdir(cwd)
    with open(path("expected.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    sources()
    several()
    printf_mapping()
    unlimited_mapping()
    same_file_points_irregular()
    chain_and_cycle()
    expected()
