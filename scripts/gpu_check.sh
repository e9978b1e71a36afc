#!/usr/bin/env bash
# The GPU runner: on a machine with the H200, in one go, build torch_memopt
# (MAX_JOBS=16), run the whole test suite with the CUDA tests executed, run the
# quick benchmark, and print a short summary last.
#   bash scripts/gpu_check.sh OUTDIR [extra pytest args]
# Writes into OUTDIR: env.txt, build.log, tests.log, bench.log,
# bench_quick.json. Nothing is installed from the network: where pytest or
# expecttest are missing, wheels in .whl/ (carried along) are used.
# MEMOPT_GPU_CHECK_BENCH=0 leaves the quick benchmark out (when a later step of
# the same call times what it needs).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_check.sh OUTDIR [pytest args]}
shift
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16}
PYTHON=${PYTHON:-python3}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$PYTHON" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  nvcc --version | tail -2
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

wheels=()
"$PYTHON" -c "import pytest" 2>/dev/null || wheels+=(.whl/pytest-*.whl .whl/pluggy-*.whl .whl/iniconfig-*.whl .whl/packaging-*.whl .whl/pygments-*.whl)
"$PYTHON" -c "import expecttest" 2>/dev/null || wheels+=(.whl/expecttest-*.whl)
if [ ${#wheels[@]} -gt 0 ]; then
  echo "installing carried wheels: ${wheels[*]}"
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/memopt_site "${wheels[@]}"
  export PYTHONPATH=/tmp/memopt_site${PYTHONPATH:+:$PYTHONPATH}
fi

# The H200 image puts a second g++ (/opt/gcc) first; extensions it links carry
# parts of a static libstdc++ that, under Python's -Bsymbolic-functions link
# flags, crash the process at the first integer formatted into an error
# message (seen 2026-11-29: SIGSEGV in std::ostream::_M_insert<long>). The
# system compiler links the libstdc++.so that torch itself uses.
if [ -z "${MEMOPT_KEEP_CXX:-}" ] && [ -x /usr/bin/g++ ]; then
  export CXX=/usr/bin/g++ CC=/usr/bin/gcc
fi
echo "compiler: ${CXX:-default} ($(${CXX:-g++} --version | head -1))"

echo "== build"
start=$(date +%s)
if ! "$PYTHON" -m pip install --no-build-isolation --no-deps -v -e . > "$OUT/build.log" 2>&1; then
  echo "pip install failed; see build.log"; tail -30 "$OUT/build.log"; exit 1
fi
build_s=$(( $(date +%s) - start ))
echo "built in ${build_s} s"

echo "== tests"
# pytest-xdist, where present, spreads the suite over 8 processes; a crashing
# test then fails alone instead of ending the run.
parallel=()
"$PYTHON" -c "import xdist" 2>/dev/null && parallel=(-n 8)
"$PYTHON" -m pytest -v -rs "${parallel[@]}" "$@" > "$OUT/tests.log" 2>&1
tests_rc=$?
grep -E "FAILED|ERROR" "$OUT/tests.log" | head -40

bench_rc=0
if [ "${MEMOPT_GPU_CHECK_BENCH:-1}" = 1 ]; then
  echo "== quick benchmark"
  "$PYTHON" -m torch_memopt.bench --quick --out "$OUT/bench_quick.json" > "$OUT/bench.log" 2>&1
  bench_rc=$?
fi

echo
echo "===================== summary ====================="
head -1 "$OUT/env.txt"
echo "build: ${build_s} s"
echo "CUDA test cases passed: $(grep -E 'PASSED' "$OUT/tests.log" | grep -c cuda)"
echo "pytest (rc=${tests_rc}): $(tail -1 "$OUT/tests.log")"
if [ -f "$OUT/bench.log" ]; then
  echo "bench (rc=${bench_rc}), last lines of $OUT/bench.log:"
  tail -25 "$OUT/bench.log"
fi
exit $(( tests_rc != 0 || bench_rc != 0 ))
