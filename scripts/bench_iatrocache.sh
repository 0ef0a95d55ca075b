#!/usr/bin/env bash
# The IatroCache anchor workloads (docs/neighbours.md section 004) side by
# side: purehdf's record stores (examples/iatro_bench.rs) and iatro-base-iac
# 0.1.4 (scripts/bench_iatrocache.py, from the oracle venv) on the same
# machine in one invocation. Prints a markdown table, with the rows "I6" (row
# I6 of docs/neighbours.md: one vs two threads on a decode-bound batch, best of
# 7 interleaved rounds, wall and CPU) that the i6 test no longer times.
#
# usage: scripts/bench_iatrocache.sh [N]   (N records, default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
PY="${PUREHDF_ORACLE_PYTHON:-.oracle-venv/bin/python}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/iatro-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cargo build --release --example iatro_bench >/dev/null
EXE="${CARGO_TARGET_DIR:-target}/release/examples/iatro_bench"
"$EXE" "$WORK/rust" "$N" >"$WORK/rust.jsonl"
if "$PY" -c 'import iatro.iac' 2>/dev/null; then
  "$PY" scripts/bench_iatrocache.py "$WORK/py" "$N" >"$WORK/py.jsonl"
else
  echo "iatro-base-iac not installed in $PY: purehdf column only" >&2
  : >"$WORK/py.jsonl"
fi
"$PY" - "$WORK/rust.jsonl" "$WORK/py.jsonl" "$N" <<'PY'
import json, sys
rows, order = {}, []
for path in sys.argv[1:3]:
    for line in open(path):
        r = json.loads(line)
        if r["workload"] not in rows:
            rows[r["workload"]] = {}
            order.append(r["workload"])
        rows[r["workload"]].update(r)
print(f"N = {sys.argv[3]}, batches of 256 random rows\n")
print("| workload | purehdf | iatro-base-iac 0.1.4 |")
print("| --- | --- | --- |")
for w in order:
    print(f"| {w} | {rows[w].get('rust', '-')} | {rows[w].get('iatro', '-')} |")
PY
