#!/usr/bin/env bash
# The npm package's tests: build it (build.sh), install the test tools from
# package-lock.json, write random h5py files and a reference medh5 sample
# (cached under $CARGO_TARGET_DIR/js-test, rewritten when their scripts
# change), then run the Node tests (test/*.test.mjs) and the browser test
# of the viewer (Debian's chromium, installed here when missing and
# possible). Prints `skipped: <why>` and passes when node (>= 20) or the
# wasm32 target is missing. PUREHDF_JS_COUNT sets the number of random
# files (default 110).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
target="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TARGET_DIR="$target"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "skipped: node/npm not installed"; exit 0
fi
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "skipped: node $(node --version) is older than 20"; exit 0
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  echo "skipped: the wasm32-unknown-unknown target is not installed"; exit 0
fi
"$here/build.sh"
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
data="$target/js-test"
py="$root/.oracle-venv/bin/python"
count="${PUREHDF_JS_COUNT:-110}"
if [ -x "$py" ]; then
  stamp="$(cat "$here/test/make_files.py" "$here/test/make_sample.py" | sha256sum | cut -c1-16)-$count"
  if [ "$(cat "$data/stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$data" && mkdir -p "$data"
    "$py" "$here/test/make_files.py" "$data/files" "$count" 7
    "$py" "$here/test/make_sample.py" "$data/sample" >/dev/null
    echo "$stamp" >"$data/stamp"
  fi
  export PUREHDF_JS_FILES="$data/files" PUREHDF_JS_SAMPLE="$data/sample"
else
  echo "skipped: random h5py files and the medh5 sample (no .oracle-venv)"
fi
chromium="$(command -v chromium || true)"
if [ -z "$chromium" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get install -y -qq chromium >/dev/null 2>&1 || true
  chromium="$(command -v chromium || true)"
fi
if [ -n "$chromium" ]; then
  export PUREHDF_JS_CHROMIUM="$chromium" PUREHDF_JS_ARTIFACTS="$target/js-artifacts"
else
  echo "skipped: the viewer's browser test (no chromium)"
fi
cd "$here" && node --test --test-concurrency=1 test/*.test.mjs
