#!/usr/bin/env bash
# Fully static Linux build of both binaries (h5, medh5), checked: glibc linked
# statically with `-C target-feature=+crt-static` into its own target dir
# (target/static), no NEEDED entries in the dynamic section, and each binary
# runs: `h5 dump` on a golden file, `medh5 demo` (write, read back, check).
# Exits 0 with "static: SKIPPED (...)" when the runner lacks the target or the
# static C library; non-zero when the build or a check fails.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
TARGET=x86_64-unknown-linux-gnu
OUT="$ROOT/target/static"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "static: SKIPPED (not an x86_64 Linux runner)"
  exit 0
fi
if ! rustc --print target-list 2>/dev/null | grep -qx "$TARGET" \
  || [ ! -d "$(rustc --print sysroot)/lib/rustlib/$TARGET/lib" ]; then
  echo "static: SKIPPED (the $TARGET target is not installed)"
  exit 0
fi
if ! command -v readelf >/dev/null 2>&1; then
  echo "static: SKIPPED (readelf is missing: apt-get install binutils)"
  exit 0
fi
if ! gcc -print-file-name=libc.a 2>/dev/null | grep -q /; then
  echo "static: SKIPPED (no static glibc, libc.a: apt-get install libc6-dev)"
  exit 0
fi

# Debug info off and more codegen units: this build is a check, not a release.
if ! RUSTFLAGS='-C target-feature=+crt-static' CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  cargo build --release --target "$TARGET" --target-dir "$OUT" --bins; then
  echo "static: FAILED (build)"
  exit 1
fi
BIN="$OUT/$TARGET/release"
status=0
for b in h5 medh5; do
  needed="$(readelf -d "$BIN/$b" 2>/dev/null | grep -c NEEDED || true)"
  interp="$(readelf -l "$BIN/$b" 2>/dev/null | grep -c 'program interpreter' || true)"
  if [ "$needed" != "0" ] || [ "$interp" != "0" ]; then
    echo "static: FAILED ($b has $needed NEEDED entries, $interp interpreter)"
    readelf -d "$BIN/$b" | grep NEEDED
    status=1
  else
    echo "static: $b has no NEEDED entries and no interpreter ($(du -h "$BIN/$b" | cut -f1))"
  fi
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if "$BIN/h5" dump --json tests/golden/sb2_v108.h5 >"$tmp/dump.json" \
  && grep -q '"datasets"\|"objects"\|"path"' "$tmp/dump.json"; then
  echo "static: h5 dump tests/golden/sb2_v108.h5 ok ($(wc -c <"$tmp/dump.json") bytes of JSON)"
else
  echo "static: FAILED (h5 dump)"
  status=1
fi
if "$BIN/medh5" demo "$tmp/demo.medh5" >"$tmp/demo.txt" 2>&1; then
  echo "static: medh5 demo ok ($(wc -c <"$tmp/demo.medh5") bytes)"
else
  echo "static: FAILED (medh5 demo)"; cat "$tmp/demo.txt"
  status=1
fi
[ $status = 0 ] && echo "static: both binaries are static and run"
exit $status
