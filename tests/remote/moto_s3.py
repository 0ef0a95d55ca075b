#!/usr/bin/env python3
"""moto's S3 server on a free loopback port for the remote-read tests.

Creates the buckets named on the command line, prints `PORT <n>` once
listening, and exits when its parent process exits (so a test run never
leaves it behind). Needs the oracle venv (moto[server], boto3).

    moto_s3.py [BUCKET...]
"""
import os
import sys
import time

from loopback import announce, exit_with_parent


def main():
    exit_with_parent()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    from moto.server import ThreadedMotoServer
    import boto3

    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    port = srv._server.server_port
    s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1")
    for b in sys.argv[1:]:
        s3.create_bucket(Bucket=b)
    announce(port)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
