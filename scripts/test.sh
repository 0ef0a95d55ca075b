#!/usr/bin/env bash
# THE test command (see README): sets up the oracle venv, then runs every test
# (unit, doc and integration) in release mode with the oracle available to the
# tests. Integration tests run with --nocapture so their summary lines (corpus
# match counts, vector counts, interop counts) appear in the log. Every group
# runs even when an earlier one fails; the script fails if any did.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash "$ROOT/scripts/oracle-venv.sh" || exit 1
export PUREHDF_ORACLE_PYTHON="$ROOT/.oracle-venv/bin/python"
# The ESRF rows' own oracle (esrf-data-compressor 0.2.1 and scikit-image in
# a venv of their own under the target dir, made once by tests/neighbours_esrf.rs).
export PUREHDF_ESRF_ORACLE=1

status=0
# Wall time of each group, so a CI log shows where the minutes go.
t0=0
lap() { echo "time: $1 $((SECONDS - t0)) s"; t0=$SECONDS; }
# Formatting and lints first, so that CI fails on them.
lap "oracle venv"
cargo fmt --check || { echo "fmt: FAILED (run cargo fmt)"; status=1; }
# Every crate of the workspace: the workspace lints (missing_docs,
# unreachable_pub, unsafe_op_in_unsafe_fn, undocumented_unsafe_blocks) are
# errors here, so every public item is documented and every unsafe block says why.
cargo clippy --release --workspace --all-targets -- -D warnings || { echo "clippy: FAILED"; status=1; }
lap "fmt + clippy"
RUSTDOCFLAGS="-D warnings" cargo doc --release --workspace --no-deps >/dev/null || { echo "cargo doc: FAILED (warnings)"; status=1; }
lap "doc"
# The wasm32-unknown-unknown target for js/test.sh (the npm package and the
# library's own wasm32 checks under Node; it prints `skipped:` without it).
if command -v rustup >/dev/null 2>&1 && rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  echo "wasm32: target installed"
else
  echo "wasm32: SKIPPED (rustup could not install the wasm32-unknown-unknown target)"
fi
# Every cargo test below takes the optional ndarray feature too (one build of
# the library serves all three, and its typed_ndarray tests run with the rest).
FEATURES=(--features purehdf/ndarray)
cargo test --release --no-fail-fast --workspace --lib --bins "${FEATURES[@]}" "$@" || status=1
lap "unit tests"
cargo test --release --no-fail-fast --workspace --doc "${FEATURES[@]}" "$@" || status=1
lap "doc tests"
cargo test --release --no-fail-fast --test '*' "${FEATURES[@]}" "$@" -- --nocapture || status=1
lap "integration tests"
# Every example runs (each asserts what it reads back).
for ex in examples/*.rs; do
  name="$(basename "$ex" .rs)"
  cargo run --release --quiet "${FEATURES[@]}" --example "$name" >/dev/null || { echo "example $name: FAILED"; status=1; }
done
echo "examples: $(ls examples/*.rs | wc -l) run"
lap "examples"
# The Python package (python/): the wheel built once (reusing this target
# dir's library builds), installed into the oracle venv, pytest against h5py,
# hdf5plugin, the reference medh5 and dask; says skipped: without the venv.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}" bash "$ROOT/python/test.sh" || { echo "python: FAILED"; status=1; }
lap "python"
# The npm package (js/): built for wasm32 once, Node tests against h5py's
# values and a range server, the viewer in Chromium; says skipped: without node.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}" bash "$ROOT/js/test.sh" || { echo "js: FAILED"; status=1; }
lap "js"
# Fully static h5 and medh5 (no NEEDED entries, both run); says SKIPPED without the target.
bash "$ROOT/scripts/static_check.sh" || status=1
lap "static binaries"
echo "time: total $SECONDS s"
exit $status
