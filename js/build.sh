#!/usr/bin/env bash
# Build the npm package `purehdf` into js/pkg (what `npm pack js/pkg` packs):
# the wasm module (cargo, wasm32-unknown-unknown, size-optimised), its
# bindings (wasm-bindgen's CLI at the version of the wasm-bindgen crate in
# js/Cargo.lock, installed from crates.io under $CARGO_TARGET_DIR/tools and
# reused), and the hand-written index.js/index.d.ts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${CARGO_TARGET_DIR:-$here/target}"
out="$here/pkg"
ver="$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$here/Cargo.lock")"
[ -n "$ver" ] || { echo "build.sh: no wasm-bindgen in js/Cargo.lock" >&2; exit 1; }
tools="$target/tools/wasm-bindgen-$ver"
if [ ! -x "$tools/bin/wasm-bindgen" ]; then
  # --locked first; a registry mirror missing one of the CLI's locked
  # dependencies gets the newest compatible ones instead.
  cargo install --quiet --locked --version "$ver" --root "$tools" wasm-bindgen-cli \
    || cargo install --quiet --version "$ver" --root "$tools" wasm-bindgen-cli
fi
# 128-bit SIMD (every current browser, Node >= 16.4): the codecs' byte
# loops vectorise (notes/perf-js.md). The caller's RUSTFLAGS (coverage,
# crt-static) are for the host build, not this one.
env -u CARGO_ENCODED_RUSTFLAGS RUSTFLAGS="-C target-feature=+simd128" \
  CARGO_TARGET_DIR="$target" cargo build --quiet --release --target wasm32-unknown-unknown \
  --manifest-path "$here/Cargo.toml"
rm -rf "$out" && mkdir -p "$out"
"$tools/bin/wasm-bindgen" --target web --out-dir "$out" --out-name purehdf_js \
  "$target/wasm32-unknown-unknown/release/purehdf_js.wasm"
# No wasm-opt pass: Debian 12's binaryen (108) turns the externref table
# wasm-bindgen initialises into one the engine refuses, and its -Oz saved
# 0.5 % gzipped on this module.
cp "$here"/pkg-src/* "$out"/
echo "built $out ($(wc -c <"$out/purehdf_js_bg.wasm") bytes of wasm, $(gzip -9c "$out/purehdf_js_bg.wasm" | wc -c) gzipped)"
