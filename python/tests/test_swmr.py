"""SWMR reads from Python: an h5py SWMR writer in a subprocess appends rows
to a chunked dataset while ``purehdf.File(path, "r", swmr=True)`` reads it,
``Dataset.refresh()`` showing each new shape; every row read holds the
values the writer wrote, and the final read equals h5py's."""

import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import need

WRITER = r'''
import sys, time
import h5py, numpy as np
path, rows = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "w", libver="latest")
d = f.create_dataset("x", shape=(0, 6), maxshape=(None, 6), chunks=(4, 6), dtype="i8")
g = f.create_dataset("t", shape=(0,), maxshape=(None,), chunks=(16,), dtype="f4")
f.swmr_mode = True
print("ready", flush=True)
sys.stdin.readline()
for i in range(rows):
    d.resize((i + 1, 6))
    d[i] = np.arange(6) + 100 * i
    g.resize((i + 1,))
    g[i] = i / 2
    d.flush()
    g.flush()
    time.sleep(0.01)
f.close()
print("done", flush=True)
'''


def test_swmr_reader_follows_an_h5py_writer(tmp_path):
    h5py = need("h5py")
    import purehdf
    path = str(tmp_path / "swmr.h5")
    rows = 150
    w = subprocess.Popen([sys.executable, "-c", WRITER, path, str(rows)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert w.stdout.readline().strip() == "ready"
        f = purehdf.File(path, "r", swmr=True)
        assert f.swmr_mode
        x, t = f["x"], f["t"]
        assert x.shape == (0, 6) and x.maxshape == (None, 6)
        w.stdin.write("go\n")
        w.stdin.flush()
        seen = set()
        deadline = time.time() + 60
        while time.time() < deadline:
            x.refresh()
            t.refresh()
            n = x.shape[0]
            seen.add(n)
            if n:
                got = x[:n]
                want = np.arange(6)[None, :] + 100 * np.arange(n)[:, None]
                # a row the writer grew the extent for but had not yet
                # written reads as fill (zeros); every other row is whole
                ok = np.all(got == want, axis=1) | np.all(got == 0, axis=1)
                assert ok.all() and np.array_equal(got[:-1], want[:-1]), n
                m = t.shape[0]
                assert np.array_equal(t[:max(m - 1, 0)], np.arange(max(m - 1, 0)) / 2)
            if n == rows and w.poll() is not None:
                break
            time.sleep(0.005)
        assert w.wait(timeout=30) == 0
        x.refresh()
        t.refresh()
        assert x.shape == (rows, 6) and t.shape == (rows,)
        with h5py.File(path, "r") as h:
            assert np.array_equal(x[()], h["x"][()])
            assert np.array_equal(t[()], h["t"][()])
        f.close()
        # the reader saw the dataset grow while the writer appended
        assert len(seen) >= 5, sorted(seen)
        print("swmr: %d distinct shapes seen while %d rows were appended" % (len(seen), rows))
    finally:
        if w.poll() is None:
            w.kill()
