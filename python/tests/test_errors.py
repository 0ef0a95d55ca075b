"""Bad input raises typed Python exceptions as h5py does (OSError
subclasses for unreadable files, KeyError for missing names,
IndexError/ValueError/TypeError for bad selections), never a crash."""

import random

import numpy as np
import pytest

from conftest import need


@pytest.fixture
def sample(tmp_path):
    h5py = need("h5py")
    p = str(tmp_path / "s.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(60, dtype="<i4").reshape(6, 10), chunks=(2, 5),
                         compression="gzip")
        f.create_dataset("s", data=3.5)
        f.create_group("g").attrs["a"] = 1
        f["dangling"] = h5py.SoftLink("/nowhere")
    return p


def test_missing_file_and_directory(tmp_path):
    import purehdf
    with pytest.raises(FileNotFoundError):
        purehdf.File(str(tmp_path / "absent.h5"))
    with pytest.raises(OSError):
        purehdf.File(str(tmp_path))


def test_garbage_and_truncated_files(tmp_path, sample):
    import purehdf
    r = random.Random(5)
    good = open(sample, "rb").read()
    with pytest.raises(OSError):
        purehdf.File(b"not an hdf5 file at all" * 10)
    with pytest.raises(OSError):
        purehdf.File(b"")
    raised = 0
    for n in range(60):
        cut = good[: r.randrange(len(good))]
        if n % 2:
            cut = bytearray(good)
            for _ in range(20):
                cut[r.randrange(len(cut))] = r.randrange(256)
            cut = bytes(cut)
        try:
            with purehdf.File(cut) as f:
                def touch(name, obj):
                    if isinstance(obj, purehdf.Dataset):
                        obj[()]
                    list(obj.attrs.items())
                f.visititems(touch)
        except (OSError, KeyError, ValueError, TypeError) as e:
            raised += 1
            assert not isinstance(e, (SystemError,))
    assert raised > 0


def test_bad_names_and_selections(sample):
    import purehdf
    with purehdf.File(sample) as f:
        with pytest.raises(KeyError):
            f["nope"]
        with pytest.raises(KeyError):
            f["g/nope/deeper"]
        with pytest.raises(KeyError):
            f["dangling"]
        with pytest.raises(KeyError):
            f["g"].attrs["missing"]
        assert "dangling" in f and "nope" not in f
        assert f.get("nope") is None
        x = f["x"]
        with pytest.raises(IndexError):
            x[6]
        with pytest.raises(IndexError):
            x[0, -11]
        with pytest.raises(ValueError):
            x[::-1]
        with pytest.raises(ValueError):
            x[0, 0, 0]
        with pytest.raises(TypeError):
            x["a":"b"]
        with pytest.raises(TypeError):
            x[[3, 1]]
        with pytest.raises(ValueError):
            x["nofield"]
        with pytest.raises(TypeError):
            len(f["s"])
        with pytest.raises(TypeError):
            f[1.5]
    with pytest.raises(ValueError):
        f["x"]


def test_selections_match_numpy(sample):
    import purehdf
    with purehdf.File(sample) as f:
        x = f["x"]
        a = np.arange(60, dtype="<i4").reshape(6, 10)
        for key in [(), Ellipsis, 3, (slice(1, 5, 2), slice(None, None, 3)), (-1, 4),
                    ([0, 2, 5],), (slice(None), [1, 7]), (np.array([True, False] * 3),),
                    (Ellipsis, 2), (slice(4, 2),)]:
            got = x[key]
            want = a[key] if key != () else a
            assert np.array_equal(got, want), key
            assert got.shape == np.asarray(want).shape
        out = np.zeros((2, 10), dtype="<i4")
        x.read_direct(out, np.s_[2:4])
        assert np.array_equal(out, a[2:4])
        chunks = list(x.iter_chunks())
        assert len(chunks) == 6 and chunks[0] == (slice(0, 2, 1), slice(0, 5, 1))
        assert sorted(np.concatenate([x[c].ravel() for c in chunks]).tolist()) == list(range(60))
        assert f["s"][()] == 3.5 and isinstance(f["s"][()], np.float64)
        assert x.chunks == (2, 5) and x.compression == "gzip" and x.compression_opts == 4
        assert len(x) == 6 and x.ndim == 2 and x.size == 60


def test_corrupted_random_files_raise_typed_errors(tmp_path, gen_random):
    """Truncated and bit-flipped copies of random h5py files: every failure
    is a typed exception, never an interpreter crash or a Rust panic."""
    import purehdf
    r = random.Random(9)
    typed = (OSError, KeyError, ValueError, TypeError, IndexError)
    outcomes = {"ok": 0, "raised": 0}
    for i in range(30):
        p = str(tmp_path / ("c%02d.h5" % i))
        gen_random.gen_one(p, random.Random(77 * 1_000_003 + i))
        good = open(p, "rb").read()
        for n in range(10):
            b = bytearray(good)
            if n % 3 == 0:
                b = b[: r.randrange(len(b))]
            else:
                for _ in range(r.choice([1, 5, 50])):
                    b[r.randrange(len(b))] = r.randrange(256)
            try:
                with purehdf.File(bytes(b)) as f:
                    def touch(name, obj):
                        try:
                            list(obj.attrs.items())
                            if isinstance(obj, purehdf.Dataset):
                                obj[()]
                        except typed:
                            outcomes["raised"] += 1
                    f.visititems(touch)
                outcomes["ok"] += 1
            except typed:
                outcomes["raised"] += 1
    print("corrupted files: %r" % outcomes)
    assert outcomes["raised"] > 0
