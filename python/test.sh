#!/usr/bin/env bash
# Build the purehdf wheel once, install it into the oracle venv and run the
# Python package's tests. Skips (exit 0) when the venv is absent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="${PUREHDF_VENV:-$root/.oracle-venv}"
if [ ! -x "$venv/bin/python" ] || [ ! -x "$venv/bin/maturin" ]; then
    echo "skipped: python tests need $venv with maturin, numpy, h5py and pytest"
    exit 0
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# maturin uses CARGO_TARGET_DIR when it is set
(cd "$here" && "$venv/bin/maturin" build --release --quiet --interpreter "$venv/bin/python" --out "$out" >&2)
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$out"/purehdf-*.whl
cd "$root"
"$venv/bin/python" -m pytest "$here/tests" -q "$@"
