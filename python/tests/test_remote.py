"""``purehdf.File(url)`` and ``purehdf.medh5.open(url)`` against the
loopback servers the Rust remote tests use (tests/remote/: a range server
and moto's S3): the same values as the local file, and handles that pickle
by URL. Skipped when the wheel was built without the `remote` feature."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, need

REMOTE = os.path.join(ROOT, "tests", "remote")


def _native_has_urls():
    from purehdf import _native
    return hasattr(_native, "open_url")


def _spawn(script, *args, env=None):
    p = subprocess.Popen([sys.executable, os.path.join(REMOTE, script), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    line = p.stdout.readline()
    if not line.startswith("PORT "):
        p.kill()
        pytest.skip("skipped: %s did not start" % script)
    return p, int(line.split()[1])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not _native_has_urls():
        pytest.skip("skipped: the wheel was built without the remote feature")
    h5py = need("h5py")
    d = tmp_path_factory.mktemp("remote")
    vol = np.arange(40 * 30 * 20, dtype="<i4").reshape(40, 30, 20)
    with h5py.File(d / "v.h5", "w") as f:
        f.create_dataset("vol", data=vol, chunks=(8, 10, 20), compression="gzip")
        f.create_dataset("g/small", data=np.linspace(0, 1, 7))
        f["g"].attrs["note"] = "remote"
    medh5_path = None
    try:
        import medh5 as ref
        medh5_path = d / "s.medh5"
        lab = (vol % 3).astype(np.uint8)
        with ref.create(str(medh5_path), sample_id="s", subject_id="p") as w:
            w.add_grid("g0", shape=vol.shape, spacing=(1.0, 1.0, 1.0))
            w.add_image("ct", vol.astype(np.int16), grid="g0", modality="CT")
            w.label_set(ref.LabelSet("o", [ref.LabelClass(1, "a", "A"),
                                           ref.LabelClass(2, "b", "B")]))
            w.add_segmentation("seg", grid="g0", labelmap=lab, label_values={1: "a", 2: "b"})
    except ImportError:
        pass
    return d, vol, medh5_path


@pytest.fixture(scope="module")
def http(files):
    d = files[0]
    p, port = _spawn("range_server.py", str(d))
    yield "http://127.0.0.1:%d" % port
    p.kill()
    p.wait()


def test_file_over_http_equals_local(files, http):
    import purehdf
    d, vol, _ = files
    url = http + "/v.h5"
    with purehdf.File(url) as f:
        assert np.array_equal(f["vol"][()], vol)
        assert np.array_equal(f["vol"][3:17, 5:6, ::3], vol[3:17, 5:6, ::3])
        assert f["g"].attrs["note"] == "remote"
        g = pickle.loads(pickle.dumps(f["g/small"]))
        assert np.array_equal(g[()], np.linspace(0, 1, 7))
        assert g.file.filename == url
    with pytest.raises(Exception):
        purehdf.File(http + "/absent.h5")


def test_medh5_over_http(files, http):
    need("medh5")
    from purehdf import medh5
    d, vol, path = files
    url = http + "/" + os.path.basename(str(path))
    with medh5.open(url) as s, medh5.open(str(path)) as local:
        assert s.content_id == local.content_id
        assert s.verify().ok
        assert np.array_equal(s.images["ct"].read((slice(2, 9), slice(0, 30), slice(4, 8))),
                              vol.astype(np.int16)[2:9, :, 4:8])
        assert np.array_equal(s.annotations["seg"].labelmap(), local.annotations["seg"].labelmap())
        s2 = pickle.loads(pickle.dumps(s))
        assert s2.path == url and s2.content_id == s.content_id


def test_file_over_s3(files, monkeypatch):
    need("moto")
    boto3 = need("boto3")
    import purehdf
    d, vol, _ = files
    env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_DEFAULT_REGION="us-east-1")
    p, port = _spawn("moto_s3.py", "bkt", env=env)
    try:
        endpoint = "http://127.0.0.1:%d" % port
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.upload_file(str(d / "v.h5"), "bkt", "dir/v.h5")
        for k, v in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                     ("AWS_REGION", "us-east-1"), ("AWS_ENDPOINT_URL", endpoint),
                     ("AWS_CONFIG_FILE", "/nonexistent"),
                     ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")):
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        with purehdf.File("s3://bkt/dir/v.h5") as f:
            assert np.array_equal(f["vol"][()], vol)
            assert np.array_equal(pickle.loads(pickle.dumps(f))["vol"][5], vol[5])
    finally:
        p.kill()
        p.wait()
