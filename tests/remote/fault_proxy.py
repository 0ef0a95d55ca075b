#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the remote-read tests (stdlib only).

Forwards every request to UPSTREAM (the range server or an S3 server) and
counts what it forwards; the tests set faults through the control URL:

    GET /__fault?kind=K[&count=N][&match=S][&delay=SEC][&after=K]
    GET /__fault?kind=clear
    GET /__stats[?reset=1]     requests, bytes, faults injected, the
                               last 200 request lines, each with its
                               Range header, and the timeline of the last
                               200 answered bodies: [arrived, upstream
                               answered, body sent] (epoch seconds),
                               bytes, Range header (JSON)

A fault applies to the next N requests (count, default 1; -1 for all) whose
"METHOD path?query" contains S (match, default "GET /" with a Range
header for ranged kinds). Kinds:

    drop        close the connection without answering
    503, 500, 403, ...   answer with that status
    slow        wait `delay` seconds before answering (then answer)
    short       send the headers, half the body, close
    oversized   send Content-Length and body `extra` (default 1000) bytes too long
    replace     after `after` matching requests, every matching request is
                answered as if the object had been replaced: a 412 for a
                conditional request (If-Match), otherwise a different ETag
                and flipped bytes
    replace_ignoring   as replace, but always the different ETag and flipped
                bytes (a server that ignores If-Match)

`--rate B` caps each response body at B bytes per second (paced in 64 KiB
pieces), as an object store caps the throughput of one request.

Prints `PORT <n>` once listening.

    fault_proxy.py UPSTREAM_HOST:PORT [--port N] [--rate BYTES_PER_SEC]
"""
import argparse
import http.client
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from loopback import serve

LOCK = threading.Lock()
STATS = {"requests": 0, "bytes": 0, "faults": 0, "by_method": {}, "lines": [], "timeline": []}
MAX_LINES = 200
FAULT = {"kind": None}
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


def take_fault(line, has_range):
    """The fault to apply to this request, or None (decrements counts)."""
    with LOCK:
        f = FAULT
        kind = f.get("kind")
        if not kind:
            return None
        m = f.get("match")
        if m is None:
            if not (line.startswith("GET /") and has_range):
                return None
        elif m not in line:
            return None
        if kind in ("replace", "replace_ignoring"):
            f["seen"] = f.get("seen", 0) + 1
            if f["seen"] <= f.get("after", 0):
                return None
            STATS["faults"] += 1
            return dict(f)
        if f.get("count", 1) == 0:
            return None
        if f.get("count", 1) > 0:
            f["count"] -= 1
        STATS["faults"] += 1
        return dict(f)


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    upstream = ("127.0.0.1", 0)
    rate = 0.0

    def log_message(self, *args):
        pass

    def control(self, parts):
        q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/__stats":
            with LOCK:
                snap = json.loads(json.dumps(STATS))
                if "reset" in q:
                    STATS.update({"requests": 0, "bytes": 0, "faults": 0, "by_method": {}, "lines": [],
                                  "timeline": []})
            body = json.dumps(snap).encode()
        else:
            with LOCK:
                FAULT.clear()
                kind = q.get("kind")
                FAULT["kind"] = None if kind in (None, "clear") else kind
                FAULT["count"] = int(q.get("count", "1"))
                FAULT["delay"] = float(q.get("delay", "0"))
                FAULT["after"] = int(q.get("after", "0"))
                FAULT["extra"] = int(q.get("extra", "1000"))
                if "match" in q:
                    FAULT["match"] = q["match"]
            body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        parts = urlsplit(self.path)
        if parts.path in ("/__fault", "/__stats"):
            self.control(parts)
            return
        t_in = time.time()
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        line = "%s %s" % (self.command, self.path)
        fault = take_fault(line, "Range" in self.headers)
        with LOCK:
            STATS["requests"] += 1
            STATS["by_method"][self.command] = STATS["by_method"].get(self.command, 0) + 1
            logged = "%s %s" % (line, self.headers.get("Range", "")) if "Range" in self.headers else line
            STATS["lines"] = (STATS["lines"] + [logged])[-MAX_LINES:]
        kind = fault["kind"] if fault else None
        if kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if kind and kind.isdigit():
            msg = b"injected fault"
            self.send_response(int(kind))
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        if kind == "slow":
            time.sleep(fault["delay"])
        replaced = kind in ("replace", "replace_ignoring")
        if kind == "replace" and "If-Match" in self.headers:
            msg = b"<Error><Code>PreconditionFailed</Code></Error>"
            self.send_response(412)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        if replaced:
            headers.pop("If-Match", None)
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError:
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        finally:
            conn.close()
        out_headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP and k.lower() != "content-length"]
        if replaced:
            out_headers = [(k, '"replaced-0001"' if k.lower() == "etag" else v) for k, v in out_headers]
            data = bytes(b ^ 0xFF for b in data)
        length = len(data)
        if kind == "oversized":
            data = data + b"\0" * fault["extra"]
            length = len(data)
        if self.command == "HEAD":
            length = resp.getheader("Content-Length", "0")
        self.send_response(resp.status, resp.reason)
        for k, v in out_headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return
        if kind == "short":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        t_up = time.time()
        self.write_paced(data)
        with LOCK:
            STATS["bytes"] += len(data)
            STATS["timeline"] = (STATS["timeline"] + [
                [t_in, t_up, time.time(), len(data), self.headers.get("Range", "")]])[-MAX_LINES:]

    def write_paced(self, data):
        """Write the body, at most `rate` bytes per second when set."""
        if not self.rate:
            self.wfile.write(data)
            return
        t0, sent, step = time.perf_counter(), 0, 1 << 16
        while sent < len(data):
            piece = data[sent:sent + step]
            self.wfile.write(piece)
            sent += len(piece)
            ahead = sent / self.rate - (time.perf_counter() - t0)
            if ahead > 0:
                time.sleep(ahead)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0.0, help="bytes per second per response")
    a = ap.parse_args()
    Proxy.rate = a.rate
    host, port = a.upstream.rsplit(":", 1)
    Proxy.upstream = (host, int(port))
    serve(Proxy, a.port)


if __name__ == "__main__":
    sys.exit(main())
