#!/usr/bin/env python3
"""Phase-balanced side-by-side run of the shared bench (issue 19).

    .oracle-venv/bin/python scripts/side_by_side.py --tool target/release/medh5 \
        --out DIR [--seed N] [--rounds 2] [--only W1,W2,W3,W4]

`run_reference.py` measures the reference, then ours, minutes apart; on a
machine whose speed drifts by tens of percent from one minute to the next, a
ratio then says as much about the minutes as about the tools. This runs the
three configurations -- the reference, ours with two threads, ours with one
(`--env MEDH5_THREADS=1`) -- in the order ABC CBA ABC ... (`--rounds` passes),
so that each has the same mean position in time, pools each cell's samples
over the passes, and writes `ref.json`, `ours2.json`, `ours1.json` (median
and samples of the pooled samples) and `cmp2.md`, `cmp1.md` (`compare.py`
of ours against the reference) in DIR. Every pass is kept as
`pass<k>-<config>.json`.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "bench"


def run_pass(cfg: str, tool: str, seed: int, only: str, out: Path, work: Path) -> None:
    cmd = [sys.executable, str(BENCH / "run_reference.py"), "--seed", str(seed),
           "--only", only, "--no-baselines", "--wait-quiet", "1.5",
           "--workdir", str(work), "--out", str(out)]
    if cfg != "ref":
        cmd += ["--tool", tool]
    if cfg == "ours1":
        cmd += ["--env", "MEDH5_THREADS=1"]
    with open(out.with_suffix(".log"), "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)


def pool(paths: list[Path], dest: Path) -> None:
    runs = [json.loads(p.read_text()) for p in paths]
    merged = runs[0]
    for key, rec in merged["records"].items():
        samples = []
        for r in runs:
            other = r["records"].get(key) or {}
            samples += other.get("samples_ms") or []
        if samples and rec.get("median_ms") is not None:
            rec["samples_ms"] = samples
            rec["median_ms"] = statistics.median(samples)
            rec["min_ms"] = min(samples)
            rec["max_ms"] = max(samples)
            rec["n"] = len(samples)
    merged.setdefault("extra", {})["pooled_from"] = [p.name for p in paths]
    dest.write_text(json.dumps(merged, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20260815)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="W1,W2,W3,W4")
    a = ap.parse_args()
    if not (BENCH / "run_reference.py").exists():
        print(f"skipped: {BENCH} not found", file=sys.stderr)
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tool = str(Path(a.tool).resolve())
    order = ["ref", "ours2", "ours1"]
    done: dict[str, list[Path]] = {c: [] for c in order}
    for k in range(a.rounds):
        for cfg in order if k % 2 == 0 else order[::-1]:
            p = out / f"pass{k}-{cfg}.json"
            print(f"pass {k}: {cfg}", file=sys.stderr, flush=True)
            run_pass(cfg, tool, a.seed, a.only, p, out / f"work-{cfg}")
            done[cfg].append(p)
    for cfg, paths in done.items():
        pool(paths, out / f"{cfg}.json")
    for cfg, md in (("ours2", "cmp2.md"), ("ours1", "cmp1.md")):
        with open(out / md, "w") as f:
            subprocess.run([sys.executable, str(BENCH / "compare.py"), str(out / "ref.json"),
                            str(out / f"{cfg}.json"), "--markdown"], check=True, stdout=f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
