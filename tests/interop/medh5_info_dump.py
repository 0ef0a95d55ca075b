"""The reference's `medh5 info` and `medh5 info --json` on every file named:
one JSON object {path: {"text", "text_code", "json", "json_code"}} on stdout
(stdout and exit code of each call). One process for all files, since the
CLI's start-up is slow.

    python medh5_info_dump.py FILE...
"""
import contextlib
import io
import json
import sys

from medh5 import cli


def run(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(args)
        except SystemExit as e:
            code = e.code
    return out.getvalue(), code if isinstance(code, int) else 1


found = {}
for f in sys.argv[1:]:
    text, text_code = run(["info", f])
    js, json_code = run(["info", "--json", f])
    found[f] = {"text": text, "text_code": text_code, "json": js, "json_code": json_code}
json.dump(found, sys.stdout)
