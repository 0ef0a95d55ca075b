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

status=0
# The core must build for wasm32-unknown-unknown (in-memory source, no mmap, no threads).
if command -v rustup >/dev/null 2>&1 && rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  cargo check --lib --no-default-features --target wasm32-unknown-unknown || status=1
  echo "wasm32: core library type-checks for wasm32-unknown-unknown (status $status)"
else
  echo "wasm32: SKIPPED (rustup could not install the wasm32-unknown-unknown target)"
fi
cargo test --release --no-fail-fast --lib --bins "$@" || status=1
cargo test --release --no-fail-fast --doc "$@" || status=1
cargo test --release --no-fail-fast --test '*' "$@" -- --nocapture || status=1
exit $status
