"""The reference CLI's stdout and exit code for every (command, file):
one JSON object {"CMD\\tFILE": {"out": stdout, "code": exit code}} on
stdout. COMMANDS is a comma-separated list of commands, each with its flags
joined by spaces (`verify --json`). The CLI is imported once and each call
runs in a forked child (cheap, and a call that kills its process -- the
reference overflows its stack on a link cycle -- is reported with
"signal": N and no output instead of ending the run).

    python medh5_cli_dump.py COMMANDS FILE...
"""
import contextlib
import io
import json
import os
import sys

from medh5 import cli


def run(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(args)
        except SystemExit as e:
            code = e.code
    if code is None:
        code = 0
    return out.getvalue(), code if isinstance(code, int) else 1


def run_forked(args):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out, code = run(args)
            data = json.dumps({"out": out, "code": code}).encode()
        except BaseException as e:  # noqa: BLE001 -- the child must exit
            data = json.dumps({"out": "", "code": 1, "exception": repr(e)}).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"out": "", "code": None, "signal": os.WTERMSIG(status)}
    return json.loads(data)


found = {}
for cmd in sys.argv[1].split(","):
    for f in sys.argv[2:]:
        found[f"{cmd}\t{f}"] = run_forked(cmd.split() + [f])
json.dump(found, sys.stdout)
