#!/usr/bin/env bash
# THE test command (see README): sets up the oracle venv, then runs every test
# (unit + integration) in release mode with the oracle available to the tests.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash "$ROOT/scripts/oracle-venv.sh"
export PUREHDF_ORACLE_PYTHON="$ROOT/.oracle-venv/bin/python"

# --no-fail-fast: every test binary runs and reports even after a failure
cargo test --release --no-fail-fast "$@"
