#!/usr/bin/env bash
# Creates (or reuses) the oracle virtualenv `.oracle-venv/` at the repository root with
# the pinned reference implementations that the tests compare purehdf against:
# h5py (libhdf5), hdf5plugin (Blosc/Blosc2/LZ4/Zstd/bitshuffle filters), python-blosc2,
# numpy, the reference `medh5` package and scipy (the bench harness's phantom);
# moto's S3 server and s3fs (remote reads: the loopback store and h5py's side
# of the bench); maturin, pytest and dask.distributed (the Python package). Also installs Debian's `hdf5-tools`
# (h5dump) when it is missing and we run as root. Idempotent: a complete venv whose
# marker matches the pins is reused without touching the network.
#
# The oracles are test-time tools only: nothing here is linked into the crate.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.oracle-venv"
PY="${PYTHON:-python3}"
# One pin per line; changing a pin invalidates the venv's marker and reinstalls.
PINS=(
  "h5py==3.16.*"
  "hdf5plugin==7.1.*"
  "blosc2"
  "numpy"
  "medh5==2.2.3"
  "scipy"
  "moto[server]"
  "s3fs"
  "maturin==1.16.*"
  "pytest"
  "dask[distributed]"
  "vneurotk==0.0.1"
  "numcodecs"
  "iatro-base-iac==0.1.4"
  "zarr==3.1.*"
  "kerchunk==0.2.*"
  "fastparquet==2026.9.*"
  "virtualizarr==2.5.*"
  "xarray"
)
MARKER="$VENV/.purehdf-oracle-complete"
WANT="$(printf '%s\n' "${PINS[@]}")"

log() { printf 'oracle-venv: %s\n' "$*" >&2; }

venv_ok() {
  [[ -x "$VENV/bin/python" && -f "$MARKER" ]] || return 1
  [[ "$(cat "$MARKER")" == "$WANT" ]] || return 1
  "$VENV/bin/python" -c 'import h5py, hdf5plugin, blosc2, numpy, medh5' >/dev/null 2>&1
}

if venv_ok; then
  log "reusing $VENV"
else
  log "creating $VENV"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}"
  "$VENV/bin/python" -c 'import h5py, hdf5plugin, blosc2, numpy, medh5'
  printf '%s' "$WANT" >"$MARKER"
fi

# scikit-image (optional, PyPI wheels, ~1 min): the SSIM oracle of tests/h5_compare.rs.
# Best effort and outside PINS, so adding it never rebuilds an existing venv.
if ! "$VENV/bin/python" -c 'import skimage' >/dev/null 2>&1; then
  log "installing scikit-image (optional SSIM oracle)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "scikit-image==0.26.*" \
    || log "scikit-image not installed: tests/h5_compare.rs will skip"
fi

# Debian tools the tests use as oracles when present: h5dump (hdf5-tools, a second,
# independent libhdf5 front end) and the zstd CLI (libzstd, which decodes every
# frame of our own Zstandard encoder in src/filters/zstd_encode's tests).
missing=()
command -v h5dump >/dev/null 2>&1 || missing+=(hdf5-tools)
command -v zstd >/dev/null 2>&1 || missing+=(zstd)
if (( ${#missing[@]} )); then
  if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    log "${missing[*]} missing and not root: skipping (their tests say skipped:)"
  fi
fi

"$VENV/bin/python" - <<'PY'
import h5py, hdf5plugin, blosc2, numpy
from importlib.metadata import version
print("oracle: h5py %s (libhdf5 %s), hdf5plugin %s, blosc2 %s, numpy %s, medh5 %s" % (
    h5py.version.version, h5py.version.hdf5_version, hdf5plugin.version,
    blosc2.__version__, numpy.__version__, version("medh5")))
PY
if command -v h5dump >/dev/null 2>&1; then
  printf 'oracle: %s\n' "$(h5dump --version 2>&1 | head -n1)"
fi
