"""File(path, "r+" | "a"): in-place edits (attributes, links, box writes)
on files h5py wrote, checked by reading them back with h5py."""

import numpy as np
import pytest

from conftest import need


def _make(path, libver="latest"):
    h5py = need("h5py")
    # "latest": groups keep their links in the object header (the editor
    # edits those; symbol-table groups are tested below)
    with h5py.File(path, "w", libver=libver) as f:
        f.attrs["title"] = "old"
        f.attrs["n"] = 3
        g = f.create_group("g")
        g.attrs["keep"] = np.arange(4, dtype="i2")
        g.create_dataset("x", data=np.arange(6.0))
        f.create_dataset("contig", data=np.arange(40, dtype="<i4").reshape(5, 8))
        f.create_dataset("be", data=np.arange(10, dtype=">u2"))
        f.create_dataset("chunked", data=np.zeros((8, 8)), chunks=(4, 4))
        f.create_dataset("grow", data=np.arange(24, dtype="<i2").reshape(3, 8),
                         chunks=(2, 4), maxshape=(None, 8), compression="gzip", shuffle=True)
        f.create_group("a")


def test_edit_in_place_equals_h5py(tmp_path):
    h5py = need("h5py")
    import purehdf
    p = str(tmp_path / "e.h5")
    _make(p)
    with purehdf.File(p, "r+") as f:
        assert f.mode == "r+"
        f.attrs["title"] = "new"
        f.attrs["vec"] = np.array([1.5, 2.5])
        f.attrs.create("s16", 7, dtype="i2")
        del f.attrs["n"]
        assert f.attrs["title"] == "new" and "n" not in f.attrs
        del f["g/x"]
        assert "x" not in f["g"]
        f.move("a", "b")
        f.create_group("g/h")
        f["g/h"].attrs["depth"] = 2
        f["ln"] = purehdf.SoftLink("/contig")
        f["contig"][1:3, 2:6] = -np.ones((2, 4), dtype="i4")
        f["contig"][4] = 99
        f["be"][3:5] = [700, 800]
        assert np.array_equal(f["contig"][1, :], [8, 9, -1, -1, -1, -1, 14, 15])
        # chunked: touched chunks re-encoded, the index rewritten
        f["chunked"][0:2, 0:2] = 1.0
        f["chunked"][5, 3:6] = 2.0
        f["grow"].resize(6, axis=0)
        assert f["grow"].shape == (6, 8)
        f["grow"][4:6] = np.full((2, 8), 9, dtype="i2")
        f["grow"].resize((5, 8))
        with pytest.raises(TypeError):
            f["contig"].resize((6, 8))
        with pytest.raises(KeyError):
            del f["nope"]
    with h5py.File(p, "r") as h:
        assert h.attrs["title"] == "new"
        assert "n" not in h.attrs
        assert np.array_equal(h.attrs["vec"], [1.5, 2.5])
        assert h.attrs["s16"] == 7 and h.attrs["s16"].dtype == np.int16
        assert np.array_equal(h["g"].attrs["keep"], np.arange(4))
        assert "x" not in h["g"] and "a" not in h and "b" in h
        assert h["g/h"].attrs["depth"] == 2
        want = np.arange(40, dtype="i4").reshape(5, 8)
        want[1:3, 2:6] = -1
        want[4] = 99
        assert np.array_equal(h["contig"][()], want)
        assert np.array_equal(h["ln"][()], want)
        be = np.arange(10)
        be[3:5] = [700, 800]
        assert np.array_equal(h["be"][()], be)
        ch = np.zeros((8, 8))
        ch[0:2, 0:2] = 1.0
        ch[5, 3:6] = 2.0
        assert np.array_equal(h["chunked"][()], ch)
        grow = np.zeros((5, 8), dtype="i2")
        grow[:3] = np.arange(24).reshape(3, 8)
        grow[4] = 9  # row 3 was never written: the fill value (0)
        assert h["grow"].shape == (5, 8)
        assert np.array_equal(h["grow"][()], grow)


def test_append_mode_creates_and_reads_only_refuses(tmp_path):
    h5py = need("h5py")
    import purehdf
    p = str(tmp_path / "new.h5")
    with purehdf.File(p, "a") as f:
        f.create_group("grp").attrs["k"] = "v"
    with h5py.File(p, "r") as h:
        assert h["grp"].attrs["k"] == "v"
    with purehdf.File(p, "r") as f:
        with pytest.raises(ValueError):
            f.attrs["x"] = 1
        with pytest.raises(ValueError):
            del f["grp"]
    with pytest.raises(FileNotFoundError):
        purehdf.File(str(tmp_path / "absent.h5"), "r+")


def test_symbol_table_groups_take_link_edits_as_h5py_sees_them(tmp_path):
    # h5py's default ("earliest") files keep links in symbol tables: the
    # editor writes the group's table anew and repoints it
    h5py = need("h5py")
    import purehdf
    p = str(tmp_path / "old.h5")
    _make(p, libver="earliest")
    with purehdf.File(p, "r+") as f:
        del f["g/x"]
        f.create_group("g/sub")
        f["g/alias"] = purehdf.SoftLink("/contig")
        f.move("a", "g/a2")
        f.attrs["title"] = "still editable"
    with h5py.File(p, "r") as h:
        assert sorted(h["g"].keys()) == ["a2", "alias", "sub"]
        assert "a" not in h and h.attrs["title"] == "still editable"
        assert h["g"].get("alias", getlink=True).path == "/contig"
        assert (h["g/alias"][...] == np.arange(40, dtype="<i4").reshape(5, 8)).all()
