"""Handles pickle by location and reopen: a Dask LocalCluster with two
process workers sums a chunked dataset as numpy does; a process pool reads
patches through pickled datasets."""

import concurrent.futures
import pickle

import numpy as np

from conftest import need


def _patch_sum(ds, i):
    return float(ds[i * 10:(i + 1) * 10].sum())


def _make(tmp_path):
    import purehdf
    p = str(tmp_path / "big.h5")
    a = np.random.default_rng(3).normal(size=(200, 64)).astype("<f4")
    with purehdf.File(p, "w") as f:
        f.create_dataset("x", data=a, chunks=(25, 32), compression="gzip")
    return p, a


def test_pickle_round_trip(tmp_path):
    import purehdf
    p, a = _make(tmp_path)
    with purehdf.File(p) as f:
        ds = f["x"]
        ds2 = pickle.loads(pickle.dumps(ds))
        assert ds2.name == "/x" and ds2.chunks == (25, 32)
        assert np.array_equal(ds2[()], a)
        f2 = pickle.loads(pickle.dumps(f))
        assert list(f2.keys()) == ["x"]
    with open(p, "rb") as fh:
        fb = purehdf.File(fh.read())
    assert np.array_equal(pickle.loads(pickle.dumps(fb["x"]))[5:9], a[5:9])


def test_process_pool(tmp_path):
    import purehdf
    p, a = _make(tmp_path)
    with purehdf.File(p) as f:
        ds = f["x"]
        with concurrent.futures.ProcessPoolExecutor(2) as ex:
            got = list(ex.map(_patch_sum, [ds] * 20, range(20)))
    want = [float(a[i * 10:(i + 1) * 10].sum()) for i in range(20)]
    assert np.allclose(got, want)


def test_dask_local_cluster(tmp_path):
    da = need("dask.array")
    distributed = need("distributed")
    import dask.array as da
    import purehdf
    p, a = _make(tmp_path)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            with purehdf.File(p) as f:
                ds = f["x"]
                arr = da.from_array(ds, chunks=ds.chunks)
                total = arr.sum(dtype="f8").compute()
                col = arr[:, 3].compute()
    assert np.isclose(total, a.sum(dtype="f8"))
    assert np.array_equal(col, a[:, 3])
    print("dask LocalCluster(2 process workers): sum %.6f == numpy %.6f" % (total, a.sum(dtype="f8")))
