"""h5py parity of the calls the random comparison does not make: asstr,
astype, fields, iter_chunks, read_direct, visit's early stop, get with
getclass/getlink, references, Empty values, named types, len/iter."""

import numpy as np
import pytest

from conftest import need


@pytest.fixture
def both(tmp_path):
    h5py = need("h5py")
    import purehdf
    p = str(tmp_path / "api.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("vs", data=["héllo", "b", ""], dtype=h5py.string_dtype())
        f.create_dataset("fs", data=np.array([b"ab", b"xyz"]))
        f.create_dataset("c", data=np.array([(1, 2.5), (3, 4.5)], dtype=[("i", "<i4"), ("f", "<f8")]))
        f.create_dataset("x", data=np.arange(100, dtype="<u2").reshape(10, 10), chunks=(3, 4))
        f.create_dataset("e", data=h5py.Empty("f4"))
        f.attrs["empty"] = h5py.Empty("i8")
        f.attrs["s"] = "text"
        f.attrs["f"] = 1.5
        f.attrs["b"] = np.bytes_(b"raw")
        f.attrs["list"] = [1, 2, 3]
        f["t"] = np.dtype([("a", "<i2"), ("b", ">f4")])
        g = f.create_group("g")
        g["ref"] = f["x"].ref
        g.attrs["r"] = f["c"].ref
        f["soft"] = h5py.SoftLink("/x")
    with h5py.File(p, "r") as hf, purehdf.File(p) as pf:
        yield h5py, hf, pf


def test_parity(both):
    h5py, hf, pf = both
    assert list(hf["vs"].asstr()[()]) == list(pf["vs"].asstr()[()]) == ["héllo", "b", ""]
    assert list(hf["vs"][()]) == list(pf["vs"][()])
    assert pf["vs"].dtype == hf["vs"].dtype and h5py.check_string_dtype(pf["vs"].dtype)
    assert list(pf["fs"][()]) == [b"ab", b"xyz"] and pf["fs"].dtype == hf["fs"].dtype
    assert np.array_equal(hf["c"]["f"], pf["c"]["f"])
    assert np.array_equal(hf["c"].fields("i")[:], pf["c"].fields("i")[:])
    assert np.array_equal(hf["x"].astype("f8")[2:4], pf["x"].astype("f8")[2:4])
    assert pf["x"].astype("f8")[2:4].dtype == np.float64
    assert list(hf["x"].iter_chunks()) == list(pf["x"].iter_chunks())
    sel = np.s_[2:8, 5:9]
    assert list(hf["x"].iter_chunks(sel)) == list(pf["x"].iter_chunks(sel))
    a, b = np.zeros((2, 10), "<u2"), np.zeros((2, 10), "<u2")
    hf["x"].read_direct(a, np.s_[4:6], np.s_[0:2])
    pf["x"].read_direct(b, np.s_[4:6], np.s_[0:2])
    assert np.array_equal(a, b)
    assert hf.visit(lambda n: n if n.startswith("g") else None) == \
        pf.visit(lambda n: n if n.startswith("g") else None) == "g"
    assert pf.get("soft", getlink=True).path == "/x"
    assert pf.get("soft", getclass=True) is type(pf["x"])
    assert pf.get("x", getclass=True, getlink=True).__name__ == "HardLink"
    assert pf[pf["g/ref"][()]].name == hf[hf["g/ref"][()]].name == "/x"
    assert pf[pf["g"].attrs["r"]].name == "/c"
    assert isinstance(pf["e"][()], type(pf["e"][()])) and pf["e"].shape is None
    assert pf["e"][()].dtype == hf["e"][()].dtype
    assert pf.attrs["empty"].dtype == hf.attrs["empty"].dtype
    for k in ("s", "f", "b", "list"):
        x, y = hf.attrs[k], pf.attrs[k]
        assert type(x) is type(y) and np.array_equal(x, y), k
    assert pf["t"].dtype == hf["t"].dtype
    assert len(pf) == len(hf) and list(pf) == list(hf)
    assert [len(r) for r in pf["x"]] == [10] * 10
    assert repr(pf["x"]).startswith('<HDF5 dataset "x"')
    assert pf["x"].parent.name == "/" and pf["g"]["ref"].file is pf


def test_set_threads():
    import purehdf
    purehdf.set_threads(0)
    with pytest.raises(ValueError):
        purehdf.set_threads(100000)
