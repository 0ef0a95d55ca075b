#!/usr/bin/env python3
"""An HTTP server with range support for the remote-read tests (stdlib only).

Serves the files under ROOT: GET and HEAD, one `Range: bytes=a-b` (also
`a-` and `-n`) per request answered 206 with Content-Range, a strong ETag
(size and modification time), `If-Match` answered 412 when it does not
match. `/__stats` returns the requests and body bytes served so far as JSON
(`/__stats?reset=1` zeroes them after reading). Prints `PORT <n>` once
listening (port 0 picks a free one).

    range_server.py ROOT [--port N]
"""
import argparse
import email.utils
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlsplit, parse_qs

from loopback import serve

LOCK = threading.Lock()
STATS = {"requests": 0, "bytes": 0, "gets": 0, "heads": 0}


def count(**kw):
    with LOCK:
        for k, v in kw.items():
            STATS[k] += v


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    root = "."

    def log_message(self, *args):  # quiet
        pass

    def send_plain(self, code, text, extra=None):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def resolve(self):
        path = unquote(urlsplit(self.path).path).lstrip("/")
        full = os.path.realpath(os.path.join(self.root, path))
        root = os.path.realpath(self.root)
        if not full.startswith(root + os.sep) or not os.path.isfile(full):
            return None
        return full

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path == "/__stats":
            with LOCK:
                snap = dict(STATS)
                if "reset" in parse_qs(parts.query):
                    for k in STATS:
                        STATS[k] = 0
            self.send_plain(200, json.dumps(snap))
            return
        self.serve(head=False)

    def serve(self, head):
        count(requests=1, **({"heads": 1} if head else {"gets": 1}))
        full = self.resolve()
        if full is None:
            self.send_plain(404, "not found")
            return
        st = os.stat(full)
        size = st.st_size
        etag = '"%x-%x"' % (size, st.st_mtime_ns)
        common = {
            "ETag": etag,
            "Accept-Ranges": "bytes",
            "Last-Modified": email.utils.formatdate(st.st_mtime, usegmt=True),
        }
        im = self.headers.get("If-Match")
        if im is not None and im.strip() != "*" and etag not in [t.strip() for t in im.split(",")]:
            self.send_plain(412, "precondition failed", common)
            return
        rng = self.headers.get("Range")
        start, end, code = 0, size, 200
        if rng and not head:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.send_plain(416, "bad range", {"Content-Range": "bytes */%d" % size})
                return
            if m.group(1) == "":
                n = int(m.group(2))
                start, end = max(0, size - n), size
            else:
                start = int(m.group(1))
                end = min(size, int(m.group(2)) + 1) if m.group(2) else size
            if start >= size or start >= end:
                self.send_plain(416, "range not satisfiable", {"Content-Range": "bytes */%d" % size})
                return
            code = 206
        self.send_response(code)
        for k, v in common.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        if code == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))
        self.end_headers()
        if head:
            return
        with open(full, "rb") as f:
            f.seek(start)
            left = end - start
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
                count(bytes=len(chunk))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    Handler.root = a.root
    serve(Handler, a.port)


if __name__ == "__main__":
    sys.exit(main())
