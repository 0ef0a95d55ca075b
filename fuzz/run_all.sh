#!/usr/bin/env bash
# Run fuzz targets one after another, each for $SECS seconds under nice 19,
# from a snapshot of a committed revision (so edits in the work tree do not
# disturb a run). Usage:
#   fuzz/run_all.sh WORKDIR REV TARGET...
# WORKDIR gets snap/ (the exported revision), corpus/<t>/, artifacts/<t>/,
# logs/<t>.log and summary.tsv (target, revision, exit code, runs, seconds).
# Seeds: python3 fuzz/seed.py WORKDIR/seeds (read as a second corpus dir).
# Needs the nightly toolchain and cargo-fuzz ($CARGO_FUZZ, default cargo-fuzz).
# FUZZ_BUILD (default "-O") holds the build flags: "-O -a" adds debug
# assertions, which check what the sanitizer cannot see (inside assembly).
set -u
work=$1; rev=$2; shift 2
secs=${SECS:-300}
fuzz=${CARGO_FUZZ:-cargo-fuzz}
repo=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$work/target}
mkdir -p "$work/snap" "$work/logs"
git -C "$repo" archive "$rev" | tar -x -C "$work/snap"
commit=$(git -C "$repo" rev-parse --short "$rev")
(cd "$work/snap" && nice -n "${NICE_BUILD:-19}" rustup run nightly "$fuzz" build ${FUZZ_BUILD:--O} --fuzz-dir fuzz) \
  > "$work/logs/build-$commit.log" 2>&1 || { echo "build failed: $work/logs/build-$commit.log"; exit 1; }
for t in "$@"; do
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t" "$work/seeds/$t"
  bin=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$t
  nice -n 19 "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$work/artifacts/$t/" "$work/corpus/$t" "$work/seeds/$t" \
    > "$work/logs/$t.log" 2>&1
  rc=$?
  runs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$work/logs/$t.log" | tail -1)
  printf '%s\t%s\t%s\t%s\n' "$t" "$commit" "$rc" "$runs" >> "$work/summary.tsv"
done
