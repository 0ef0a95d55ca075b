#!/usr/bin/env python3
"""Writes the golden HDF5 files of purehdf's tests with h5py/libhdf5 (+ hdf5plugin),
then their expected descriptions with the corpus oracle's own inspector.

Usage (from anywhere; needs the oracle venv):
    .oracle-venv/bin/python tests/golden/make_golden.py [--corpus DIR]

Outputs, next to this script:
    *.h5                 the golden files (small: the whole folder stays < 2 MB)
    expected/<f>.json    the oracle's description of each (same format as the shared
                         corpus's expected/*.json), made by importing
                         make_expected.py from the shared corpus folder
    VERSIONS.txt         h5py / libhdf5 / hdf5plugin / numpy versions used

The data are deterministic (fixed seeds), so re-running only changes the files if
the libraries change.
"""

import argparse
import importlib.util
import json
import os
import sys

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t, h5z

try:
    import hdf5plugin
except ImportError:  # the filter files then miss the plugin datasets
    hdf5plugin = None

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261129)


def smooth(shape, dtype):
    """Compressible but non-trivial data."""
    n = int(np.prod(shape))
    base = (np.arange(n) % 97) + RNG.integers(0, 4, n)
    return base.reshape(shape).astype(dtype)


def common_types(f, track=False):
    """Datasets and attributes of every datatype class h5py writes."""
    g = f.create_group("types", track_order=track)
    g["i1"] = np.arange(-5, 5, dtype="i1")
    g["u2_be"] = np.arange(10, dtype=">u2")
    g["i4"] = np.arange(-20, 20, dtype="<i4").reshape(4, 10)
    g["i8_be"] = np.arange(6, dtype=">i8") * -(10**12)
    g["u8"] = np.array([0, 1, 2**63, 2**64 - 1], dtype="<u8")
    g["f2"] = np.array([0.5, -1.25, 65504, np.inf, np.nan], dtype="<f2")
    g["f4"] = np.linspace(-1, 1, 12, dtype="<f4").reshape(3, 4)
    g["f8_be"] = np.array([3.14, -2.5e-300, 1e300], dtype=">f8")
    g["scalar"] = np.float64(42.5)
    g["bool"] = np.array([True, False, True])
    g["c8"] = np.array([1 + 2j, -3.5 - 0.25j], dtype="c8")
    g["c16"] = np.array([1e-3 + 1j], dtype="c16")
    g["fixed_nullpad"] = np.array([b"alpha", b"be", b""], dtype="S5")
    g.create_dataset("vlen_str", data=["short", "a much longer string é", ""],
                     dtype=h5py.string_dtype("utf-8"))
    g.create_dataset("vlen_ascii", data=np.array([b"x", b"yz"], dtype=object),
                     dtype=h5py.string_dtype("ascii"))
    vint = h5py.vlen_dtype(np.dtype("<i4"))
    d = g.create_dataset("vlen_int", (3,), dtype=vint)
    d[0] = [1]
    d[1] = [2, 3]
    d[2] = []
    vf = h5py.vlen_dtype(np.dtype(">f8"))
    d = g.create_dataset("vlen_f8_be", (2,), dtype=vf)
    d[0] = [0.5, 1.5, 2.5]
    d[1] = [-1.0]
    enum = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="u1")
    g.create_dataset("enum", data=np.array([0, 42, 1, 1], dtype="u1"), dtype=enum)
    comp = np.dtype([("id", "<i4"), ("x", ">f8"), ("name", "S6"), ("v", "<i2", (2, 3))])
    rows = np.zeros(4, dtype=comp)
    rows["id"] = [1, 2, 3, 4]
    rows["x"] = [0.5, 1.5, -2.0, 1e10]
    rows["name"] = [b"one", b"two", b"three", b"four"]
    rows["v"] = np.arange(24).reshape(4, 2, 3)
    g["compound"] = rows
    padded = np.dtype({"names": ["a", "b"], "formats": ["u1", "<f4"], "offsets": [0, 4],
                       "itemsize": 12})
    pr = np.zeros(3, dtype=padded)
    pr["a"] = [7, 8, 9]
    pr["b"] = [0.25, 0.5, 0.75]
    g["compound_padded"] = pr
    vcomp = np.dtype([("id", "<i4"), ("label", h5py.string_dtype("utf-8"))])
    g.create_dataset("compound_vlen", data=np.array([(1, "a"), (2, "bcd")], dtype=vcomp))
    arr_t = np.dtype(("<i4", (2, 3)))
    g.create_dataset("array", (4,), dtype=arr_t)[...] = np.arange(24, dtype="<i4").reshape(4, 2, 3)
    g["empty_shape"] = np.zeros((0, 3), dtype="<i4")
    g.create_dataset("null_space", data=h5py.Empty("<f4"))
    # named (committed) datatype and a dataset using it
    g["named_t"] = np.dtype([("p", "<i8"), ("q", "<f4")])
    nd = g.create_dataset("uses_named", (2,), dtype=g["named_t"])
    nd[...] = np.array([(1, 2.0), (3, 4.0)], dtype=nd.dtype)
    # HDF5 2.0 complex class (H5T_COMPLEX), written through the low-level API
    if hasattr(h5t, "COMPLEX_IEEE_F32LE"):
        space = h5s.create_simple((3,))
        dsid = h5d.create(g.id, b"complex_class", h5t.COMPLEX_IEEE_F32LE, space)
        dsid.write(h5s.ALL, h5s.ALL, np.array([1 + 1j, 2 - 2j, 0.5j], dtype="c8"))
        dsid.close()


def attributes(obj, n_extra=0):
    a = obj.attrs
    a["int"] = np.int32(-7)
    a["float_arr"] = np.array([1.5, 2.5, np.nan], dtype="<f8")
    a["str_vlen"] = "hello é"
    a["str_fixed"] = np.array([b"ab", b"cde"], dtype="S3")
    a["bool"] = np.bool_(True)
    a["big"] = np.arange(100, dtype="<i2")  # > 64 elements: hashed
    a["compound"] = np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")])
    a["empty"] = h5py.Empty("<i4")
    a.create("vlen_seq", data=[np.array([1, 2], "<i4"), np.array([3], "<i4")],
             dtype=h5py.vlen_dtype(np.dtype("<i4")))
    a.create("array_t", data=np.arange(12, dtype="<i4").reshape(2, 2, 3),
             dtype=np.dtype(("<i4", (2, 3))))
    for i in range(n_extra):
        a["extra_%02d" % i] = np.arange(i + 1, dtype="<u4")


def references(f):
    g = f.create_group("refs")
    target = g.create_dataset("target", data=np.arange(20, dtype="<i4").reshape(4, 5))
    rd = g.create_dataset("objrefs", (2,), dtype=h5py.ref_dtype)
    rd[0] = target.ref
    rd[1] = f["/types"].ref
    rr = g.create_dataset("regionrefs", (1,), dtype=h5py.regionref_dtype)
    rr[0] = target.regionref[1:3, 2:4]
    g.attrs["ref_attr"] = target.ref


def links(f, ext_name):
    g = f.create_group("links")
    g["soft"] = h5py.SoftLink("/types/i4")
    g["dangling"] = h5py.SoftLink("/no/such/object")
    g["external"] = h5py.ExternalLink(ext_name, "/data")
    g["hard_alias"] = f["/types/f4"]  # second hard link to one dataset


def layouts(f, libver_latest):
    g = f.create_group("layouts")
    g["contiguous"] = smooth((50, 40), "<i4")
    # compact layout (low-level)
    data = smooth((6, 5), "<f8")
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_layout(h5d.COMPACT)
    dsid = h5d.create(g.id, b"compact", h5t.IEEE_F64LE, h5s.create_simple(data.shape), dcpl=dcpl)
    dsid.write(h5s.ALL, h5s.ALL, data)
    dsid.close()
    # chunked with edge chunks; index: v1 B-tree (earliest) or fixed array (latest)
    g.create_dataset("chunked_edges", data=smooth((10, 7), "<i2"), chunks=(4, 3))
    # fill values: late allocation, never written; and partly written chunks
    g.create_dataset("fill_unwritten", (5, 5), dtype="<i4", fillvalue=42)
    d = g.create_dataset("fill_partial", (20, 20), dtype="<f4", chunks=(5, 5), fillvalue=-1.5)
    d[0:5, 0:5] = 1.0
    d[12:14, 17:19] = 2.0
    if libver_latest:
        # single chunk (chunk == shape, fixed) unfiltered and filtered
        g.create_dataset("single_chunk", data=smooth((30, 30), "<u2"), chunks=(30, 30))
        g.create_dataset("single_chunk_deflate", data=smooth((30, 30), "<u2"), chunks=(30, 30),
                         compression="gzip")
        # fixed array with more than 1024 chunks (paged data blocks)
        g.create_dataset("fixed_array_paged", data=smooth((2100,), "u1"), chunks=(1,))
        # extensible array (one unlimited dimension), many chunks
        g.create_dataset("extensible_array", data=smooth((600, 4), "<i4"), chunks=(2, 4),
                         maxshape=(None, 4))
        # version 2 B-tree (two unlimited dimensions), deep enough to split nodes
        g.create_dataset("btree_v2", data=smooth((60, 60), "<i4"), chunks=(2, 2),
                         maxshape=(None, None), compression="gzip", compression_opts=1)
        # implicit index: fixed shape, no filters, early allocation (low-level)
        data = smooth((12, 12), "<i8")
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 4))
        dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
        dsid = h5d.create(g.id, b"implicit", h5t.STD_I64LE, h5s.create_simple(data.shape),
                          dcpl=dcpl)
        dsid.write(h5s.ALL, h5s.ALL, data)
        dsid.close()
    else:
        g.create_dataset("btree_v1_big", data=smooth((100, 100), "<i4"), chunks=(7, 9),
                         maxshape=(None, None))


def filters(f):
    g = f.create_group("filters")
    base = smooth((64, 50), "<i4")
    fl = smooth((40, 40), "<f4") / 7
    g.create_dataset("deflate", data=base, chunks=(16, 25), compression="gzip", compression_opts=6)
    g.create_dataset("shuffle_deflate", data=base, chunks=(16, 25), shuffle=True,
                     compression="gzip")
    g.create_dataset("fletcher32", data=base, chunks=(16, 25), fletcher32=True)
    g.create_dataset("all_three", data=base, chunks=(16, 25), shuffle=True, compression="gzip",
                     fletcher32=True)
    g.create_dataset("lzf", data=base, chunks=(16, 25), compression="lzf")
    if h5z.filter_avail(h5z.FILTER_SZIP):
        g.create_dataset("szip", data=base, chunks=(16, 25), compression="szip",
                         compression_opts=("nn", 8))
    g.create_dataset("scaleoffset_int", data=base, chunks=(16, 25), scaleoffset=0)
    g.create_dataset("scaleoffset_float", data=fl, chunks=(20, 20), scaleoffset=3)
    # n-bit on a 12-bit integer type (low-level)
    tid = h5t.STD_U16LE.copy()
    tid.set_precision(12)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((16, 25))
    dcpl.set_filter(h5z.FILTER_NBIT)
    dsid = h5d.create(g.id, b"nbit", tid, h5s.create_simple(base.shape), dcpl=dcpl)
    dsid.write(h5s.ALL, h5s.ALL, (base % 4096).astype("<u2"))
    dsid.close()
    if hdf5plugin is None:
        return
    hp = hdf5plugin
    plug = {
        "blosc_lz4_shuffle": hp.Blosc(cname="lz4", clevel=5, shuffle=hp.Blosc.SHUFFLE),
        "blosc_blosclz_bitshuffle": hp.Blosc(cname="blosclz", clevel=5, shuffle=hp.Blosc.BITSHUFFLE),
        "blosc_zstd_noshuffle": hp.Blosc(cname="zstd", clevel=3, shuffle=hp.Blosc.NOSHUFFLE),
        "blosc_zlib": hp.Blosc(cname="zlib", clevel=5),
        "blosc_lz4hc": hp.Blosc(cname="lz4hc", clevel=5),
        "blosc2_lz4_shuffle": hp.Blosc2(cname="lz4", clevel=5, filters=hp.Blosc2.SHUFFLE),
        "blosc2_zstd_bitshuffle": hp.Blosc2(cname="zstd", clevel=3, filters=hp.Blosc2.BITSHUFFLE),
        "blosc2_blosclz": hp.Blosc2(cname="blosclz", clevel=5, filters=hp.Blosc2.NOFILTER),
        "lz4": hp.LZ4(),
        "zstd": hp.Zstd(clevel=3),
        "bitshuffle_lz4": hp.Bitshuffle(cname="lz4"),
        "bitshuffle_zstd": hp.Bitshuffle(cname="zstd"),
        "bitshuffle_plain": hp.Bitshuffle(cname="none"),
        "bzip2": hp.BZip2(blocksize=9),
    }
    for name, opts in plug.items():
        g.create_dataset(name, data=base, chunks=(16, 25), **opts)
    g.create_dataset("blosc2_float_edges", data=fl[:37, :33], chunks=(16, 16),
                     **hp.Blosc2(cname="lz4", filters=hp.Blosc2.SHUFFLE))


def groups(f):
    g = f.create_group("groups")
    small = g.create_group("compact")
    for i in range(3):
        small.create_group("g%d" % i)
    dense = g.create_group("dense")
    for i in range(20):
        dense["d%02d" % i] = np.array([i], dtype="<i2")
    ordered = g.create_group("dense_ordered", track_order=True)
    for i in reversed(range(12)):
        ordered.create_group("o%02d" % i)
    nested = g.create_group("a/b/c/d")
    nested.attrs["depth"] = 4


def write_ext(path):
    with h5py.File(path, "w", libver="earliest") as f:
        f["data"] = np.arange(5, dtype="<i4")


def write_earliest(path, ext_name):
    with h5py.File(path, "w", libver="earliest") as f:
        common_types(f)
        attributes(f["/"])
        attributes(f["/types/i4"])
        references(f)
        links(f, ext_name)
        layouts(f, libver_latest=False)
        filters(f)
        g = f.create_group("many_links")  # symbol-table group with > 8 entries (several nodes)
        for i in range(40):
            g.create_group("s%02d" % i)


def write_latest(path, ext_name):
    with h5py.File(path, "w", libver="latest") as f:
        common_types(f, track=True)
        attributes(f["/"], n_extra=12)  # > 8 attributes: dense storage
        attributes(f["/types/i4"])
        references(f)
        links(f, ext_name)
        layouts(f, libver_latest=True)
        filters(f)
        groups(f)


def write_v2(path):
    with h5py.File(path, "w", libver=("v108", "v108")) as f:
        f["x"] = np.arange(10, dtype="<f8")
        g = f.create_group("g")
        for i in range(10):
            g["d%d" % i] = np.int16(i)
        g.attrs["note"] = "superblock v2"
        f.create_dataset("chunked", data=smooth((30, 30), "<i4"), chunks=(8, 8),
                         compression="gzip")


def expected(files, corpus):
    spec = importlib.util.spec_from_file_location("make_expected",
                                                  os.path.join(corpus, "make_expected.py"))
    me = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(me)
    me.HERE = HERE  # paths are taken relative to the golden folder
    os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
    cwd = os.getcwd()
    for name in files:
        data = me.inspect_file(name)
        os.chdir(cwd)
        data.pop("file_sha256", None)  # the files are committed; no need to pin bytes
        with open(os.path.join(HERE, "expected", name + ".json"), "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=False, ensure_ascii=False)
            fh.write("\n")
        print("%s: %s objects, reads_all=%s" % (name, len(data.get("objects", [])),
                                                 data.get("h5py_reads_all")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "..", "..", "shared", "corpus"))
    a = ap.parse_args()
    corpus = a.corpus
    os.chdir(HERE)
    write_ext("ext_target.h5")
    write_earliest("sb0_earliest.h5", "ext_target.h5")
    write_latest("sb3_latest.h5", "ext_target.h5")
    write_v2("sb2_v108.h5")
    files = ["ext_target.h5", "sb0_earliest.h5", "sb2_v108.h5", "sb3_latest.h5"]
    expected(files, corpus)
    with open(os.path.join(HERE, "VERSIONS.txt"), "w") as fh:
        fh.write("h5py %s\nlibhdf5 %s\nhdf5plugin %s\nnumpy %s\n" % (
            h5py.version.version, h5py.version.hdf5_version,
            getattr(hdf5plugin, "version", "absent"), np.__version__))
    total = sum(os.path.getsize(os.path.join(HERE, n)) for n in files)
    print("total size of golden files: %d bytes" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
