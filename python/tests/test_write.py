"""Files written through purehdf read identically in h5py (values, dtypes,
shapes, chunks, filters, fill values, attributes, links) and pass h5dump."""

import random
import shutil
import subprocess

import numpy as np
import pytest

from conftest import need

TYPES = ["<i1", "<u1", "<i2", ">u2", "<i4", ">i4", "<u8", ">i8", "<f2", "<f4", ">f4", "<f8",
         ">f8", "<c8", "<c16", "?", "S5", [("a", "<i4"), ("b", ">f8"), ("c", "S3")],
         [("v", "<i2", (2, 3)), ("w", "<u1")]]
FILTERS = [{}, {"compression": "gzip"}, {"compression": "gzip", "compression_opts": 9,
                                          "shuffle": True},
           {"compression": "lzf"}, {"fletcher32": True}, {"compression": "blosc2"},
           {"compression": "zstd"}, {"compression": "lz4"}]


def random_values(r, dt, shape):
    n = int(np.prod(shape)) if shape else 1
    raw = np.frombuffer(bytes(r.randrange(256) for _ in range(n * dt.itemsize)), dtype=dt)
    if dt.kind == "b":
        raw = raw.view("u1") % 2 == 1
    if dt.kind in "fc" or (dt.names and any(dt.fields[k][0].kind == "f" for k in dt.names)):
        raw = np.zeros(n, dtype=dt)
        if dt.names:
            for k in dt.names:
                if dt.fields[k][0].kind in "iuf":
                    raw[k] = [r.uniform(-9, 9) for _ in range(n)]
        elif dt.kind == "f":
            raw[:] = [r.uniform(-1e3, 1e3) for _ in range(n)]
        else:
            raw[:] = [complex(r.uniform(-9, 9), r.uniform(-9, 9)) for _ in range(n)]
    return np.array(raw).reshape(shape)


def test_written_files_read_in_h5py(tmp_path):
    h5py = need("h5py")
    hdf5plugin = need("hdf5plugin")
    import purehdf
    assert hdf5plugin
    r = random.Random(11)
    count = 0
    for i in range(40):
        p = str(tmp_path / ("w%02d.h5" % i))
        expect = {}
        with purehdf.File(p, "w") as f:
            f.attrs["title"] = "file %d" % i
            f.attrs["ints"] = np.arange(i % 5 + 1, dtype="<i8")
            f.attrs["fixed"] = b"abc"
            for j in range(r.randint(1, 6)):
                dt = np.dtype(r.choice(TYPES))
                shape = r.choice([(), (r.randint(1, 30),), (r.randint(1, 9), r.randint(1, 9)),
                                  (2, 3, 4), (0,)])
                data = random_values(r, dt, shape)
                kw = {}
                if shape and 0 not in shape and r.random() < 0.6:
                    kw["chunks"] = tuple(r.randint(1, s) for s in shape)
                    if dt.kind in "iuf" and dt.names is None:
                        kw.update(r.choice(FILTERS))
                    if r.random() < 0.3:
                        kw["maxshape"] = (None,) + shape[1:]
                name = "g%d/d%d" % (j % 2, j)
                ds = f.create_dataset(name, data=data, **kw)
                if kw.get("chunks") and r.random() < 0.5:
                    # slice assignment into the chunked dataset before close
                    sel = tuple(slice(0, max(1, s // 2)) for s in shape)
                    ds[sel] = data[sel][::-1] if data.ndim else data
                    data = data.copy()
                    data[sel] = data[sel][::-1]
                ds.attrs["n"] = j
                expect[name] = (data, kw)
            f.create_dataset("strings", data=["", "a", "héllo", "x" * 40])
            f.create_dataset("filled", shape=(5, 4), dtype="<f4", fillvalue=2.5,
                             chunks=(2, 2))
            f["link"] = purehdf.SoftLink("/strings")
            f["ext"] = purehdf.ExternalLink("other.h5", "/x")
        with h5py.File(p, "r") as h:
            assert h.attrs["title"] == "file %d" % i
            assert np.array_equal(h.attrs["ints"], np.arange(i % 5 + 1))
            assert h.attrs["fixed"] == b"abc"
            for name, (data, kw) in expect.items():
                d = h[name]
                assert d.dtype == data.dtype, name
                assert d.shape == data.shape, name
                got = d[()]
                if data.dtype.kind in "fc":
                    assert np.array_equal(got, data, equal_nan=True), name
                else:
                    assert np.asarray(got, dtype=data.dtype).tobytes() == data.tobytes(), name
                assert d.chunks == kw.get("chunks"), name
                if "compression" in kw and kw["compression"] in ("gzip", "lzf"):
                    assert d.compression == kw["compression"]
                assert d.attrs["n"] == int(name[-1])
                count += 1
            assert [s.decode() for s in h["strings"][()]] == ["", "a", "héllo", "x" * 40]
            assert np.all(h["filled"][()] == 2.5) and h["filled"].fillvalue == 2.5
            assert h["link"].name in ("/link", "/strings")
            assert isinstance(h.get("ext", getlink=True), h5py.ExternalLink)
        # and purehdf reads its own file back as h5py does
        from compare import compare_files
        with purehdf.File(p) as pf:
            d = compare_files(p, pf, seed=i)
        assert d.problems == [], d.problems[:5]
        if shutil.which("h5dump"):
            res = subprocess.run(["h5dump", "-H", p], capture_output=True)
            assert res.returncode == 0, res.stderr[-500:]
    print("written files: 40 files, %d datasets read back identically in h5py" % count)


def test_write_refusals(tmp_path):
    need("h5py")
    import purehdf
    p = str(tmp_path / "x.h5")
    with purehdf.File(p, "w") as f:
        f.create_dataset("a", data=np.arange(3))
        with pytest.raises(ValueError):
            f.create_dataset("a", data=np.arange(3))
        with pytest.raises(ValueError):
            f.create_dataset("b", data=np.arange(3), compression="nonesuch")
        with pytest.raises(ValueError):
            f.create_dataset("c", data=np.arange(3), compression="gzip", compression_opts=12)
    with pytest.raises(FileExistsError):
        purehdf.File(p, "x")
    with pytest.raises(ValueError):
        purehdf.File(p, "q")
    with purehdf.File(p, "a") as f:  # "a" edits an existing file in place
        assert list(f) == ["a"] and f.mode == "r+"
    # an exception inside the block leaves the path untouched
    before = open(p, "rb").read()
    with pytest.raises(RuntimeError):
        with purehdf.File(p, "w") as f:
            f.create_dataset("z", data=np.arange(5))
            raise RuntimeError("stop")
    assert open(p, "rb").read() == before
