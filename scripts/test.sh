#!/usr/bin/env bash
# The test command (the README's second command; CI runs it through .ci/run).
# From a fresh machine: installs torch and the test deps, builds torch_memopt
# with its CUDA kernels compiled whenever nvcc is found (a GPU is not needed to
# compile), then runs the whole pytest suite. CUDA tests skip with a reason
# where no GPU is present; on a GPU machine use scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.14.1}

echo "== installing ${TORCH_SPEC} and the test deps"
"$PYTHON" -m pip install --quiet "$TORCH_SPEC" ninja "pytest>=7" numpy expecttest
# The drop-in tests and the e2e suite build small Hugging Face and timm models from
# configs (no download); the plot tests draw with matplotlib.
"$PYTHON" -m pip install --quiet transformers timm matplotlib
# tests/test_cmake_build.py drives the LibTorch build; it needs cmake >= 3.18.
command -v cmake >/dev/null || "$PYTHON" -m pip install --quiet cmake

echo "== building torch_memopt (MAX_JOBS=${MAX_JOBS:-$(nproc)})"
start=$(date +%s)
MAX_JOBS=${MAX_JOBS:-$(nproc)} "$PYTHON" -m pip install --no-build-isolation -v -e . 2>&1 |
  grep -E "torch_memopt:|nvcc|error|Error|Successfully" | sed -E 's/^(.{0,240}).*/\1/'
"$PYTHON" -c "import torch_memopt as t; print('built with CUDA:', t.built_with_cuda())"
echo "== build took $(( $(date +%s) - start )) s"

echo "== pytest"
# -rsfE: skips first, then failures and errors, so a log's tail names what went wrong.
"$PYTHON" -m pytest -rsfE "$@"
