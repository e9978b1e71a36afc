#!/usr/bin/env bash
# The GPU runner: on a machine with a GPU, in one call, build torch_memopt
# (MAX_JOBS=16), run the test suite with the CUDA tests executed, run the named
# benchmark suites, and print a short summary last.
#   bash scripts/gpu_check.sh OUTDIR [SUITE ...]
# Environment:
#   MEMOPT_PYTEST   pytest arguments (default: the whole suite; "skip": no tests)
#   MEMOPT_BENCH    more arguments of python -m torch_memopt.bench (e.g. --quick)
#   MEMOPT_BENCH_TIMEOUT  seconds the suites may take (default 1800), so that a run
#                   cut short still packs what it wrote; the harness starts no case in
#                   the last 60 of them (--deadline-s), so the suite running then saves
#                   what it timed instead of being killed with nothing written
#   MEMOPT_FUZZ=N   also the differential fuzzer, N cases an op on CUDA
#                   (python -m torch_memopt.testing.fuzz; seed MEMOPT_FUZZ_SEED, default 0;
#                   cut after MEMOPT_FUZZ_TIMEOUT seconds, default 300)
#   MEMOPT_SANITIZE=1  compute-sanitizer memcheck and racecheck over scripts/sanitize_*.py
#   MEMOPT_SANITIZE_SCRIPTS  which of them (default "sanitize_gemm sanitize_norms sanitize_fuzz");
#                   each run cut after MEMOPT_SANITIZE_TIMEOUT seconds (default 300)
#   MEMOPT_GIT_COMMIT  the commit the results JSON names (the device copy's .git is not
#                   the code's: pass $(git rev-parse --short HEAD) from the checkout)
# The build is skipped when csrc/ and setup.py are as they were at the last build
# (a second call on a machine still warm). Nothing is installed from the network:
# wheels in .whl/ (carried along: pytest, expecttest, liger-kernel) are used.
# With .devbuild/out carried (scripts/prebuild_for_device.sh, built here from the same
# sources), nothing is compiled: the prebuilt extension is unpacked instead
# (MEMOPT_PREBUILT=0: build anyway).
# Writes OUTDIR/summary.txt, OUTDIR/logs.tgz (env, build, tests, bench and
# sanitizer logs) and OUTDIR/results.tgz (the suites' JSON and PNG; unpack it
# into benchmarks/results/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_check.sh OUTDIR [SUITE ...]}
shift
SUITES=("$@")
mkdir -p "$OUT/logs" "$OUT/results"
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16}
PYTHON=${PYTHON:-python3}
LOG="$OUT/logs"
status=0

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$PYTHON" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  nvcc --version | tail -2
} > "$LOG/env.txt" 2>&1
cat "$LOG/env.txt"

if compgen -G ".whl/*.whl" > /dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/memopt_site .whl/*.whl
  export PYTHONPATH=/tmp/memopt_site${PYTHONPATH:+:$PYTHONPATH}
fi

# The system g++ as the host compiler: scripts/system_cxx.sh says why.
source scripts/system_cxx.sh
source scripts/prebuilt.sh

echo "== build"
start=$(date +%s)
# The sources' hash beside the extension (scripts/prebuilt.sh says why).
sources_hash=$(sources_hash)
built=$(ls torch_memopt/_C*.so 2>/dev/null | head -1)
cuda_built() {
  "$PYTHON" -c "import torch_memopt, sys; sys.exit(not torch_memopt.built_with_cuda())" 2>/dev/null
}
if [ -n "$built" ] && [ "$(cat build/.sources_hash 2>/dev/null)" = "$sources_hash" ] && cuda_built; then
  echo "build: up to date ($built)" | tee "$LOG/build.log"
# The extension built on the CPU machine for this one (scripts/prebuild_for_device.sh,
# carried in .devbuild/out), used while it was built from these very sources.
elif [ "${MEMOPT_PREBUILT:-1}" = 1 ] && prebuilt=$(pack_for .devbuild/out) &&
     use_prebuilt "$prebuilt" torch_memopt && cuda_built; then
  built=$(ls torch_memopt/_C*.so | head -1)
  mkdir -p build && echo "$sources_hash" > build/.sources_hash
  echo "build: prebuilt ($prebuilt, sources $sources_hash)" | tee "$LOG/build.log"
elif "$PYTHON" -m pip install --no-build-isolation --no-deps -v -e . > "$LOG/build.log" 2>&1; then
  built=$(ls torch_memopt/_C*.so | head -1)
  mkdir -p build && echo "$sources_hash" > build/.sources_hash
else
  echo "pip install failed; see build.log"; tail -30 "$LOG/build.log"; status=1; built=""
fi
build_s=$(( $(date +%s) - start ))
echo "build: ${build_s} s"

tests_line="not run"
if [ -n "$built" ] && [ "${MEMOPT_PYTEST:-}" != skip ]; then
  echo "== tests"
  # pytest-xdist, where present, spreads the suite over 8 processes; a crashing
  # test then fails alone instead of ending the run. loadgroup keeps the tests
  # marked xdist_group("large_memory") (4-9 GiB tensors) on one worker, in turn.
  parallel=()
  "$PYTHON" -c "import xdist" 2>/dev/null && parallel=(-n 8 --dist loadgroup)
  # shellcheck disable=SC2086
  "$PYTHON" -m pytest -v -rs "${parallel[@]}" ${MEMOPT_PYTEST:-} > "$LOG/tests.log" 2>&1 || status=1
  grep -E "^(FAILED|ERROR)" "$LOG/tests.log" | head -40
  tests_line=$(tail -1 "$LOG/tests.log")
fi

fuzz_lines=""
if [ -n "$built" ] && [ -n "${MEMOPT_FUZZ:-}" ]; then
  echo "== fuzz: ${MEMOPT_FUZZ} cases an op"
  timeout "${MEMOPT_FUZZ_TIMEOUT:-300}" "$PYTHON" -m torch_memopt.testing.fuzz --device cuda --cases "$MEMOPT_FUZZ" \
    --seed "${MEMOPT_FUZZ_SEED:-0}" > "$LOG/fuzz.log" 2>&1 || status=1
  fuzz_lines=$(grep -E "^(fuzz|done) " "$LOG/fuzz.log")
  grep -E "^FAIL" "$LOG/fuzz.log" | head -20
fi

if [ "${MEMOPT_SANITIZE:-0}" = 1 ]; then
  for script in ${MEMOPT_SANITIZE_SCRIPTS:-sanitize_gemm sanitize_norms sanitize_fuzz}; do
    for tool in memcheck racecheck; do
      # sanitize_fuzz's argument: the cases an op (issue 18: memcheck >= 50, racecheck >= 20)
      args=()
      [ "$script" = sanitize_fuzz ] && { args=(50); [ "$tool" = racecheck ] && args=(20); }
      timeout "${MEMOPT_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" \
        "$PYTHON" "scripts/$script.py" "${args[@]}" > "$LOG/${script}_$tool.txt" 2>&1 || status=1
      echo "$script $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/${script}_$tool.txt" | tail -1), $(tail -1 "$LOG/${script}_$tool.txt")"
    done
  done
fi

if [ ${#SUITES[@]} -gt 0 ] && [ -n "$built" ]; then
  echo "== suites: ${SUITES[*]}"
  bench_s=${MEMOPT_BENCH_TIMEOUT:-1800}
  deadline=()
  [ "$bench_s" -gt 120 ] && deadline=(--deadline-s $(( bench_s - 60 )))
  # shellcheck disable=SC2086
  timeout "$bench_s" \
    "$PYTHON" -m torch_memopt.bench "${SUITES[@]}" "${deadline[@]}" ${MEMOPT_BENCH:-} --plot --out "$OUT/results" \
    > "$LOG/bench.log" 2> "$LOG/bench.err" || status=1
fi

{
  echo "===================== summary ====================="
  head -2 "$LOG/env.txt" | tail -1
  echo "build: ${build_s} s"
  echo "pytest: ${tests_line}"
  [ -n "$fuzz_lines" ] && echo "$fuzz_lines"
  if [ -f "$LOG/bench.log" ]; then
    grep -E "^== |took [0-9]+ s$|^not timed" "$LOG/bench.log" | awk '!seen[$0]++' | head -40
    grep -E "^(Traceback|[A-Za-z]*Error)" "$LOG/bench.err" | head -5
    echo "--- summary lines of bench.log"
    grep -E "^[a-z0-9-]+: ours " "$LOG/bench.log"
  fi
} > "$OUT/summary.txt"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOG"
tar -czf "$OUT/results.tgz" -C "$OUT/results" . && rm -rf "$OUT/results"
cat "$OUT/summary.txt"
exit $status
