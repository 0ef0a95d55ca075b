"""purehdf.medh5 returns what the reference medh5 package returns on samples
the reference wrote (tests/interop/medh5_random_samples.py, with mutated
copies): identity, content_id, profiles, images, region reads, chunks,
verify verdicts and the recomputed content_id."""

import glob
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from conftest import INTEROP, need


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    need("medh5")
    out = str(tmp_path_factory.mktemp("medh5"))
    subprocess.run([sys.executable, os.path.join(INTEROP, "medh5_random_samples.py"), out, "10"],
                   check=True, capture_output=True)
    paths = sorted(glob.glob(os.path.join(out, "*.medh5")))
    assert len(paths) >= 10
    return paths


def verdict(v):
    return (v.ok, v.content_id_ok, v.checked, v.mismatched, v.undigested, v.malformed,
            v.content_id_declared, v.content_id_computed, v.stale_index, v.unattested,
            v.unverifiable)


def test_medh5_api_equals_the_reference(samples):
    import medh5 as ref
    from purehdf import medh5 as ours
    r = random.Random(3)
    compared = 0
    for p in samples:
        with ref.open(p) as a, ours.open(p) as b:
            assert a.identity.to_json() == b.identity.to_json(), p
            assert a.content_id == b.content_id, p
            assert a.profiles == b.profiles, p
            assert a.version == b.version
            assert sorted(a.images) == sorted(b.images), p
            assert a.compute_content_id() == b.compute_content_id(), p
            assert verdict(a.verify()) == verdict(b.verify()), p
            part = [r.choice(sorted(a.images)) and "images/" + sorted(a.images)[0]]
            assert verdict(a.verify(partial=part)) == verdict(b.verify(partial=part)), p
            for iid in a.images:
                ia, ib = a.images[iid], b.images[iid]
                assert (ia.shape, ia.dtype, ia.chunks) == (ib.shape, ib.dtype, ib.chunks)
                assert (ia.modality, ia.grid_id, ia.digest) == (ib.modality, ib.grid_id, ib.digest)
                assert np.array_equal(ia.read(), ib.read())
                for _ in range(5):
                    roi = []
                    for n in ia.shape:
                        if r.random() < 0.2:
                            roi.append(r.randrange(n))
                        else:
                            lo = r.randrange(n)
                            roi.append(slice(lo, r.randint(lo + 1, n)))
                    x, y = ia.read(tuple(roi)), ib.read(tuple(roi))
                    assert x.dtype == y.dtype and np.array_equal(x, y), roi
                    x, y = ia.read(tuple(roi), dtype=np.uint8), ib.read(tuple(roi), dtype=np.uint8)
                    assert np.array_equal(x, y), roi
                    compared += 1
    print("medh5: %d samples, %d region reads equal to the reference" % (len(samples), compared))


def test_reference_script_runs_with_only_the_import_changed(samples):
    script = '''
import numpy as np
from {mod} import medh5
out = []
for p in PATHS:
    with medh5.open(p) as s:
        v = s.verify()
        img = s.images[sorted(s.images)[0]]
        patch = img.read((slice(0, 2), slice(1, 5), slice(0, 3)))
        out.append((s.identity.to_json(), s.content_id, sorted(s.profiles), v.ok,
                    v.mismatched, s.compute_content_id(), img.shape, img.chunks,
                    patch.tolist()))
print(repr(out))
'''
    res = []
    for mod in ("medh5_ref_shim", "purehdf"):
        src = script.replace("from {mod} import medh5", "import medh5" if mod != "purehdf"
                             else "from purehdf import medh5")
        src = src.replace("PATHS", repr(samples))
        res.append(subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                                  check=True).stdout)
    assert res[0] == res[1]


def test_not_a_sample(tmp_path):
    need("h5py")
    from purehdf import medh5
    with pytest.raises(OSError):
        medh5.open(str(tmp_path / "absent.medh5"))
    p = tmp_path / "junk.medh5"
    p.write_bytes(b"junk" * 100)
    with pytest.raises((OSError, ValueError)):
        medh5.open(str(p))
