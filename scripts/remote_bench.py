#!/usr/bin/env python3
"""Remote reads on a loopback S3 server: our CLI against one plain GET and
against h5py over an s3fs file object, with the server-side request counts.

Starts moto (tests/remote/moto_s3.py) and a counting proxy in front of it
(tests/remote/fault_proxy.py, no faults), writes a medh5 sample with one
N^3 int16 image (`medh5 create`), uploads it, then times in the same run:

  full   `h5 cat URL IMAGE --out x.npy` vs one plain GET of the whole object
         (and `h5 cat` of the local file: the decode and write floor)
  patch  `h5 cat URL IMAGE --slice a:b,a:b,a:b` (64^3) vs h5py over s3fs
  plain  the full read and one GET through the plain range server
         (tests/remote/range_server.py) instead of moto: what moto's own
         per-request cost adds
  capped the full read and one GET through a second proxy whose responses
         are paced at --rate bytes per second each (default 100 MB/s, the
         order of one request's throughput from a real object store): there
         concurrent requests should beat one GET; loopback unthrottled they
         cannot, since decoding alone takes longer than the GET

Run with the oracle venv's Python (numpy, h5py, s3fs, moto):

    .oracle-venv/bin/python scripts/remote_bench.py [--size 256] [--repeat 3]
        [--bin target/release]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spawn(script, *args):
    p = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "tests", "remote", script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = p.stdout.readline()
    if not line.startswith("PORT "):
        sys.exit("%s did not start: %r" % (script, line))
    return p, int(line.split()[1])


def stats(port, reset=False):
    q = "?reset=1" if reset else ""
    with urllib.request.urlopen("http://127.0.0.1:%d/__stats%s" % (port, q)) as r:
        return json.loads(r.read())


def timed(fn, repeat, proxy):
    """Median seconds of `repeat` runs of fn, and the requests/bytes of one run."""
    times, counts = [], None
    for _ in range(repeat):
        stats(proxy, reset=True)
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        s = stats(proxy)
        counts = (s["requests"], s["bytes"])
    return statistics.median(times), counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256, help="image edge (voxels)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--profile", default="balanced")
    ap.add_argument("--rate", type=float, default=100e6,
                    help="bytes per second of each response through the capped proxy")
    ap.add_argument("--only", default="",
                    help="comma list of row groups to time (full, patch, plain, capped); all by default")
    ap.add_argument("--timeline", action="store_true",
                    help="print the capped proxy's timeline of one capped full read "
                         "(each request: arrived, upstream answered, body sent, in ms "
                         "after the process started)")
    a = ap.parse_args()
    groups = set(filter(None, a.only.split(","))) or {"full", "patch", "plain", "capped"}
    if hasattr(os, "getloadavg"):
        print("load average: %.2f %.2f %.2f" % os.getloadavg())
    import numpy as np

    h5 = os.path.join(a.bin, "h5")
    medh5 = os.path.join(a.bin, "medh5")
    for b in (h5, medh5):
        if not os.path.isfile(b):
            sys.exit("no %s: cargo build --release --bins" % b)

    work = tempfile.mkdtemp(prefix="remote-bench-")
    moto, moto_port = spawn("moto_s3.py", "bench")
    proxy, port = spawn("fault_proxy.py", "127.0.0.1:%d" % moto_port)
    capped, capped_port = spawn("fault_proxy.py", "127.0.0.1:%d" % moto_port,
                                "--rate", str(a.rate))
    served = os.path.join(work, "served")
    os.makedirs(served)
    plain, plain_port = spawn("range_server.py", served)
    endpoint = "http://127.0.0.1:%d" % port
    env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=endpoint)
    try:
        n = a.size
        rng = np.random.default_rng(7)
        img = (rng.normal(0, 200, (n, n, n)) + np.arange(n)[:, None, None]).astype("<i2")
        np.save(os.path.join(work, "ct.npy"), img)
        manifest = {
            "sample_id": "bench", "subject_id": "B-1", "profile": a.profile,
            "grids": {"ct": {"shape": [n, n, n], "spacing": [1.0, 1.0, 1.0],
                             "origin": [0.0, 0.0, 0.0]}},
            "images": {"CT": {"grid": "ct", "npy": "ct.npy", "modality": "CT"}},
        }
        with open(os.path.join(work, "m.json"), "w") as f:
            json.dump(manifest, f)
        local = os.path.join(work, "bench.medh5")
        subprocess.run([medh5, "create", "--from", os.path.join(work, "m.json"), local],
                       check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(local)
        ls = subprocess.run([h5, "ls", "-r", local], check=True, capture_output=True, text=True)
        dset = next(l.split("\t")[0] for l in ls.stdout.splitlines()
                    if l.startswith("/images/") and "\tdataset\t" in l)
        url = "s3://bench/bench.medh5"
        import boto3
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")
        s3.upload_file(local, "bench", "bench.medh5")
        shutil.copy(local, os.path.join(served, "bench.medh5"))
        plain_url = "http://127.0.0.1:%d/bench.medh5" % plain_port
        capped_env = dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:%d" % capped_port)
        capped_s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % capped_port,
                                 region_name="us-east-1", aws_access_key_id="bench",
                                 aws_secret_access_key="bench")
        print("object: %s, %d bytes (%.1f MiB), image %s %d^3 int16 (%.1f MiB)"
              % (url, size, size / 2**20, dset, n, img.nbytes / 2**20))

        out = os.path.join(work, "x.npy")

        # The verdict over S3 must be the local one (paths aside).
        def verdict(target):
            r = subprocess.run([medh5, "verify", "--json", target], env=env,
                               capture_output=True, text=True)
            doc = json.loads(r.stdout)
            for d in doc:
                d.pop("path", None)
                d.pop("file", None)
            return r.returncode, doc

        same = verdict(local) == verdict(url)
        print("medh5 verify over S3 equals the local verdict: %s" % ("yes" if same else "NO"))
        if not same:
            sys.exit("medh5 verify over S3 differs from the local verdict")

        fetch_part = []

        def full_ours():
            r = subprocess.run([h5, "cat", url, dset, "--out", out],
                               env=dict(env, PUREHDF_REMOTE_STATS="1"), check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            # "remote stats: URL: N requests, B bytes, last byte T s after open"
            for line in r.stderr.splitlines():
                if line.startswith("remote stats:") and "last byte" in line:
                    words = line.replace(",", "").split()
                    fetch_part.append((int(words[words.index("bytes") - 1]),
                                       float(words[words.index("byte") + 1])))

        def full_plain():
            subprocess.run([h5, "cat", plain_url, dset, "--out", out], env=env, check=True,
                           stdout=subprocess.DEVNULL)

        def get_plain():
            with urllib.request.urlopen(plain_url) as r:
                while r.read(1 << 20):
                    pass

        def full_capped():
            subprocess.run([h5, "cat", url, dset, "--out", out], env=capped_env, check=True,
                           stdout=subprocess.DEVNULL)

        def get_capped():
            body = capped_s3.get_object(Bucket="bench", Key="bench.medh5")["Body"]
            while body.read(1 << 20):
                pass

        def full_local():
            subprocess.run([h5, "cat", local, dset, "--out", out], check=True,
                           stdout=subprocess.DEVNULL)

        def full_get():
            body = s3.get_object(Bucket="bench", Key="bench.medh5")["Body"]
            while body.read(1 << 20):
                pass

        lo = min(64, n // 4)
        hi = lo + min(64, n - lo)
        sl = ",".join(["%d:%d" % (lo, hi)] * 3)

        def patch_ours():
            subprocess.run([h5, "cat", url, dset, "--slice", sl, "--out", out], env=env,
                           check=True, stdout=subprocess.DEVNULL)

        def patch_h5py():
            import h5py
            import s3fs
            fs = s3fs.S3FileSystem(key="bench", secret="bench",
                                   client_kwargs={"endpoint_url": endpoint,
                                                  "region_name": "us-east-1"},
                                   skip_instance_cache=True)
            with fs.open("bench/bench.medh5", "rb") as fo, h5py.File(fo, "r") as f:
                import hdf5plugin  # noqa: F401  (Blosc2 and friends)
                f[dset][lo:hi, lo:hi, lo:hi]

        full_ours()
        got = np.load(out)
        assert (got == img).all(), "full read differs"
        rows = []
        if "full" in groups:
            rows.append(("full image, h5 cat (ours)", timed(full_ours, a.repeat, port)))
            rows.append(("full object, one plain GET", timed(full_get, a.repeat, port)))
            rows.append(("full image, local file (floor)", timed(full_local, a.repeat, port)))
        if "patch" in groups:
            rows.append(("64^3 patch, h5 cat (ours)", timed(patch_ours, a.repeat, port)))
            try:
                rows.append(("64^3 patch, h5py over s3fs", timed(patch_h5py, a.repeat, port)))
            except Exception as e:  # report, do not hide the rest
                print("h5py over s3fs failed: %s" % e)
        if "plain" in groups:
            # The range server counts nothing: no request column for it.
            rows.append(("plain server: full, h5 cat", timed(full_plain, a.repeat, port)))
            rows.append(("plain server: one GET", timed(get_plain, a.repeat, port)))
        cap = "capped %.0f MB/s/req:" % (a.rate / 1e6)
        if "capped" in groups:
            rows.append((cap + " full, h5 cat", timed(full_capped, a.repeat, capped_port)))
            rows.append((cap + " one GET", timed(get_capped, a.repeat, capped_port)))
        if a.timeline:
            for what, fn in (("capped full read", full_capped), ("capped one GET", get_capped)):
                stats(capped_port, reset=True)
                t0 = time.time()
                fn()
                t1 = time.time()
                print("timeline of one %s (%.1f ms in all), ms after start:"
                      % (what, 1e3 * (t1 - t0)))
                print("%9s %9s %9s %10s  %s" % ("arrived", "upstream", "sent", "bytes", "range"))
                for t_in, t_up, t_out, nb, rng_h in sorted(stats(capped_port)["timeline"]):
                    print("%9.1f %9.1f %9.1f %10d  %s" % (1e3 * (t_in - t0), 1e3 * (t_up - t0),
                                                         1e3 * (t_out - t0), nb, rng_h))
        print("%-36s %10s %10s %14s" % ("", "seconds", "requests", "bytes served"))
        for name, (t, (req, by)) in rows:
            if name.startswith("plain server"):
                print("%-36s %10.3f %10s %14s" % (name, t, "-", "-"))
            else:
                print("%-36s %10.3f %10d %14d" % (name, t, req, by))
        full = dict(rows)

        def ratio(label, ours, get):
            if ours in full and get in full:
                print("full read throughput vs one GET (%s): %.0f %%"
                      % (label, 100 * full[get][0] / full[ours][0]))

        ratio("moto, unthrottled", "full image, h5 cat (ours)", "full object, one plain GET")
        ratio("plain range server, unthrottled", "plain server: full, h5 cat",
              "plain server: one GET")
        ratio(cap.rstrip(":"), cap + " full, h5 cat", cap + " one GET")
        if fetch_part and "full object, one plain GET" in full:
            tg = full["full object, one plain GET"][0]
            # The fetching alone: bytes received / time from the open to the
            # last byte (median over the runs), decoding and writing aside.
            fb = statistics.median(b for b, _ in fetch_part)
            ft = statistics.median(t for _, t in fetch_part)
            print("full read, fetch part alone: %d bytes in %.3f s = %.0f MB/s "
                  "(one GET: %.0f MB/s, %.0f %%)"
                  % (fb, ft, fb / ft / 1e6, size / tg / 1e6, 100 * (fb / ft) / (size / tg)))
        if "64^3 patch, h5py over s3fs" in full:
            tp, th = full["64^3 patch, h5 cat (ours)"][0], full["64^3 patch, h5py over s3fs"][0]
            print("patch: ours %.1fx faster than h5py over s3fs" % (th / tp))
    finally:
        proxy.kill()
        capped.kill()
        plain.kill()
        moto.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
