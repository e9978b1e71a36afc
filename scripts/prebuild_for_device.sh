#!/usr/bin/env bash
# Build the extension here, for the device's Python and torch, so that a device call
# spends none of its minutes compiling. The device's own build took 92-291 s of every
# call (the A/B's two builds 145-291 s), out of 30 device-minutes a session; here it
# costs the two CPUs' time only. nvcc here and there is the same release (13.0, V13.0.88),
# so the kernels are the same machine code the device would build.
#   bash scripts/prebuild_for_device.sh [OUTDIR]     (default .devbuild/out)
# OUTDIR gets the extension, stripped and xz-packed (~25 MB: carry OUTDIR, within the
# carry's 64 MiB), and sources_hash, the hash gpu_check.sh computes over csrc/ and
# setup.py: gpu_check.sh uses the pack only while the tree's hash is that one.
# Environment:
#   DEVICE_PYTHON  an interpreter with the device's torch (default: a venv made in
#                  .devbuild/venv from pyenv's 3.12, torch==$DEVICE_TORCH installed)
#   DEVICE_TORCH   the device's torch release (default 2.11.0; cu130 builds)
#   MAX_JOBS       parallel compile jobs (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prebuilt.sh
OUT=${1:-.devbuild/out}
DEVICE_TORCH=${DEVICE_TORCH:-2.11.0}
PY=${DEVICE_PYTHON:-}
if [ -z "$PY" ]; then
  PY=.devbuild/venv/bin/python
  if [ ! -x "$PY" ]; then
    base=$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -1)
    [ -n "$base" ] || { echo "no Python 3.12 (pyenv) to build for the device"; exit 1; }
    "$base" -m venv .devbuild/venv
    "$PY" -m pip install -q "torch==$DEVICE_TORCH" numpy setuptools ninja
  fi
fi
"$PY" -c "import sys, torch; print('building for python', sys.version.split()[0], 'torch', torch.__version__)"
# Objects in a folder of their own: build/temp holds this machine's (another Python's).
rm -rf .devbuild/lib && mkdir -p .devbuild/lib "$OUT"
start=$(date +%s)
MEMOPT_BUILD_TEMP=$PWD/.devbuild/temp MAX_JOBS=${MAX_JOBS:-2} \
  "$PY" setup.py -q build_ext --build-lib .devbuild/lib > .devbuild/build.log 2>&1 ||
  { tail -30 .devbuild/build.log; exit 1; }
so=$(ls .devbuild/lib/torch_memopt/_C*.so)
# --strip-unneeded drops the host code's symbol and debug tables (100 -> 86 MB); the
# kernels' fatbin, most of it, stays as built.
strip --strip-unneeded "$so"
rm -f "$OUT"/_C*.so.xz
xz -T"${MAX_JOBS:-2}" -6 -c "$so" > "$OUT/$(basename "$so").xz"
sources_hash > "$OUT/sources_hash"
echo "prebuilt in $(( $(date +%s) - start )) s: $(ls "$OUT"/*.xz) ($(du -m "$OUT"/*.xz | cut -f1) MB)," \
  "sources $(cat "$OUT/sources_hash")"
