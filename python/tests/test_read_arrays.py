"""Reads that fill fresh numpy arrays: large contiguous datasets (copied in
pieces on several threads), chunked ones, odd types and empty selections
equal h5py's values, dtype and shape; the arrays are writable and live on
after the file is closed."""

import numpy as np
import pytest

from conftest import need


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    h5py = need("h5py")
    p = str(tmp_path_factory.mktemp("arrays") / "big.h5")
    rng = np.random.default_rng(7)
    vals = {
        # 9 MiB + a tail: three pieces of unequal length
        "contiguous": rng.integers(-30000, 30000, (3, 1537, 1024), dtype="<i2"),
        "contig_be": rng.random((700, 1100)).astype(">f8"),
        "chunked": rng.integers(0, 2**31, (130, 257, 65), dtype="<u4"),
        "gzip": rng.integers(0, 50, (96, 96, 97), dtype="<i2"),
        "compound": np.array([(i, i * 0.5) for i in range(5000)],
                             dtype=[("a", "<i4"), ("b", "<f8")]),
        "empty": np.zeros((0, 7), dtype="<f4"),
        "scalar": np.array(3.25, dtype="<f4"),
    }
    with h5py.File(p, "w") as f:
        for k, v in vals.items():
            if k == "chunked":
                f.create_dataset(k, data=v, chunks=(17, 33, 65))
            elif k == "gzip":
                f.create_dataset(k, data=v, chunks=(32, 32, 32), compression="gzip")
            else:
                f.create_dataset(k, data=v)
    return p, vals


@pytest.mark.parametrize("name", ["contiguous", "contig_be", "chunked", "gzip",
                                  "compound", "empty", "scalar"])
def test_whole_read_equals_h5py(big, name):
    import purehdf
    h5py = need("h5py")
    p, _ = big
    with h5py.File(p, "r") as f:
        want = f[name][()]
    with purehdf.File(p) as f:
        got = f[name][()]
    assert got.dtype == want.dtype
    assert np.shape(got) == np.shape(want)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("sel", [np.s_[1:3, 100:900:3, ::7], np.s_[2, 5, :],
                                 np.s_[:, -1, 10:20], np.s_[0:0]])
def test_selections_equal_h5py(big, sel):
    import purehdf
    h5py = need("h5py")
    p, _ = big
    for name in ("contiguous", "chunked"):
        with h5py.File(p, "r") as f:
            want = f[name][sel]
        with purehdf.File(p) as f:
            got = f[name][sel]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)


def test_arrays_are_writable_and_outlive_the_file(big):
    import purehdf
    p, vals = big
    with purehdf.File(p) as f:
        a = f["contiguous"][()]
        b = f["gzip"][()]
        c = f["chunked"][5:9]
    for arr in (a, b, c):
        assert arr.flags.writeable
        arr.flat[0] = 1
        arr.flat[-1] = 2
    want = vals["contiguous"].copy()
    want.flat[0], want.flat[-1] = 1, 2
    assert np.array_equal(a, want)
    # a second read is not affected by the writes to the first
    with purehdf.File(p) as f:
        assert np.array_equal(f["contiguous"][()], vals["contiguous"])
