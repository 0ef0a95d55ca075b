#!/usr/bin/env bash
# `h5 recompress` against `h5repack` (gzip 4 + shuffle) and against the esrf
# compressor's own Blosc2 pipeline (lossless codecs), on the same generated
# files, in one run (issue 15, notes/perf-recompress.md).
#
#   scripts/bench_repack.sh [WORKDIR]
#
# Environment:
#   H5            h5 binary (default target/release/h5; build it with
#                 `cargo build --release --bin h5`)
#   PY            python with h5py + numpy (default: $PUREHDF_ORACLE_PYTHON,
#                 else .oracle-venv/bin/python)
#   ESRF_PYTHON   python with esrf-data-compressor 0.2.1 installed (its own
#                 venv); unset: the esrf part is skipped and says so
#   ROUNDS        interleaved rounds (default 3)
#   WORKERS       h5 recompress --workers (default 2)
#   ESRF_TARGETS  Blosc2 targets for the esrf comparison (default
#                 "zstd:5 lz4:5"; byte shuffle on both sides)
#
# Inputs: 4 files, each one contiguous uint16 stack 100 x 256 x 512
# (26.2 MB, Poisson noise around a smooth profile, mean ~1600), as in the note.
# Each round runs h5repack on the 4 files one after the other (it is single-
# threaded), then `h5 recompress` on all 4 with --workers $WORKERS and
# --manifest (so the run includes everything a real run does: verification of
# every output, both files' SHA-256, staging and rename). CPU is user+sys of
# the whole command (`/usr/bin/time`). Decoded data of every output is then
# checked equal to the input with h5py.
set -euo pipefail
cd "$(dirname "$0")/.."
H5=${H5:-target/release/h5}
PY=${PY:-${PUREHDF_ORACLE_PYTHON:-.oracle-venv/bin/python}}
ROUNDS=${ROUNDS:-3}
WORKERS=${WORKERS:-2}
ESRF_TARGETS=${ESRF_TARGETS:-"zstd:5 lz4:5"}
W=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bench_repack.XXXXXX")}
H5=$(realpath "$H5")
command -v h5repack >/dev/null || { echo "h5repack not found (Debian hdf5-tools)"; exit 2; }
[ -x "$H5" ] || { echo "no $H5: cargo build --release --bin h5"; exit 2; }
mkdir -p "$W/in"
echo "workdir $W; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

if [ ! -f "$W/in/stack3.h5" ]; then
  "$PY" - "$W/in" <<'EOF'
import sys, numpy as np, h5py
out = sys.argv[1]
base = (1600 + 300*np.sin(np.linspace(0, 20, 512))[None,None,:]).astype('f8')
for i in range(4):
    rng = np.random.default_rng(5 + i)
    d = rng.poisson(np.broadcast_to(base, (100,256,512))).astype('u2')
    with h5py.File(f"{out}/stack{i}.h5", "w") as f:
        f.create_dataset("data", data=d)
EOF
fi
IN=("$W"/in/stack0.h5 "$W"/in/stack1.h5 "$W"/in/stack2.h5 "$W"/in/stack3.h5)
INBYTES=$(cat "${IN[@]}" | wc -c)

# time CMD... -> "user sys wall" in $W/t
timed() { /usr/bin/time -f '%U %S %e' -o "$W/t" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }; }
sizes() { cat "$@" | wc -c; }
row() { # name user sys wall outbytes
  awk -v n="$1" -v u="$2" -v s="$3" -v w="$4" -v o="$5" -v i="$INBYTES" \
    'BEGIN { printf "%-28s cpu %6.2f s  wall %6.2f s  %7.1f MB/s  out %10d B (%.3fx)\n", n, u+s, w, i/w/1e6, o, i/o }'
}

echo
echo "== gzip 4 + shuffle: h5repack -f SHUF -f GZIP=4 vs h5 recompress --filter shuffle+deflate:4 --workers $WORKERS"
declare -a RC RP RCW RPW
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$W/rp" "$W/rc" "$W/m.json"; mkdir -p "$W/rp"
  timed sh -c "for f in ${IN[*]}; do h5repack -f SHUF -f GZIP=4 \"\$f\" \"$W/rp/\$(basename \$f)\"; done"
  read -r u s w <"$W/t"; RP+=("$(echo "$u + $s" | bc)"); RPW+=("$w")
  row "h5repack x4 (round $r)" "$u" "$s" "$w" "$(sizes "$W"/rp/*.h5)"
  timed "$H5" recompress "${IN[@]}" --filter shuffle+deflate:4 --workers "$WORKERS" \
    --layout mirror --from "$W/in" --to "$W/rc" --manifest "$W/m.json"
  read -r u s w <"$W/t"; RC+=("$(echo "$u + $s" | bc)"); RCW+=("$w")
  row "h5 recompress (round $r)" "$u" "$s" "$w" "$(sizes "$W"/rc/*.h5)"
done
awk -v a="${RP[*]}" -v b="${RC[*]}" -v c="${RPW[*]}" -v d="${RCW[*]}" 'BEGIN {
  n = split(a, x, " "); split(b, y, " "); split(c, p, " "); split(d, q, " ");
  for (k = 1; k <= n; k++) { sx += x[k]; sy += y[k]; sp += p[k]; sq += q[k] }
  printf "mean over %d rounds: CPU h5 recompress / h5repack = %.2f; throughput h5 recompress / h5repack (wall) = %.2fx\n", n, sy/sx, sp/sq }'
echo "sizes: h5 recompress / h5repack = $(echo "scale=4; $(sizes "$W"/rc/*.h5) / $(sizes "$W"/rp/*.h5)" | bc)"

check() { # dir-of-outputs suffix : decoded data equal to the inputs (h5py + hdf5plugin)
  "$PY" - "$W/in" "$1" "$2" <<'EOF'
import sys, numpy as np, h5py
try:
    import hdf5plugin  # noqa: F401 (Blosc2 outputs)
except ImportError:
    pass
src, out, suffix = sys.argv[1:4]
for i in range(4):
    with h5py.File(f"{src}/stack{i}.h5") as a, h5py.File(f"{out}/stack{i}{suffix}.h5") as b:
        assert np.array_equal(a["data"][()], b["data"][()]), f"stack{i}: decoded data differ"
print(f"decoded data equal (h5py): 4/4 files in {out}")
EOF
}
check "$W/rp" ""
check "$W/rc" ""

echo
if [ -z "${ESRF_PYTHON:-}" ]; then
  echo "skipped: esrf comparison (set ESRF_PYTHON to a python with esrf-data-compressor 0.2.1)"
  exit 0
fi
echo "== esrf-data-compressor's own pipeline (JP2KCompressor via CompressorManager, its Blosc2 cparams"
echo "   made lossless: codec/clevel below, filters [SHUFFLE]; splitmode NEVER_SPLIT, blocks = one frame)"
echo "   vs h5 recompress --filter blosc2:CODEC:LEVEL:shuffle --workers $WORKERS"
for t in $ESRF_TARGETS; do
  codec=${t%%:*}; level=${t##*:}
  for r in $(seq 1 "$ROUNDS"); do
    rm -rf "$W/esrf" "$W/rcb" "$W/mb.json"; mkdir -p "$W/esrf"; cp "${IN[@]}" "$W/esrf/"
    timed "$ESRF_PYTHON" - "$W/esrf" "$codec" "$level" <<'EOF'
import sys, glob
import blosc2
import esrf_data_compressor.compressors.jp2k as jp2k
from esrf_data_compressor.compressors.base import CompressorManager
d, codec, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
# the pipeline of JP2KCompressor._compress_3d, its codec made lossless
jp2k.BASE_CPARAMS.update(codec={"zstd": blosc2.Codec.ZSTD, "lz4": blosc2.Codec.LZ4}[codec],
                         clevel=level, filters=[blosc2.Filter.SHUFFLE])
files = sorted(glob.glob(f"{d}/stack?.h5"))
CompressorManager(method="jp2k", layout="sibling").compress_files(files)
EOF
    read -r u s w <"$W/t"
    row "esrf $t (round $r)" "$u" "$s" "$w" "$(sizes "$W"/esrf/*_jp2k.h5)"
    timed "$H5" recompress "${IN[@]}" --filter "blosc2:$codec:$level:shuffle" --workers "$WORKERS" \
      --layout mirror --from "$W/in" --to "$W/rcb" --manifest "$W/mb.json"
    read -r u s w <"$W/t"
    row "h5 recompress $t (round $r)" "$u" "$s" "$w" "$(sizes "$W"/rcb/*.h5)"
  done
  PY="$ESRF_PYTHON" check "$W/esrf" "_jp2k"
  PY="$ESRF_PYTHON" check "$W/rcb" ""
done
