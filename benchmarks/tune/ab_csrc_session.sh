#!/usr/bin/env bash
# A kernel change measured before and after on one GPU, in one device call: the device
# lends an H100 or an H200, so a result is compared only with one timed on the same
# machine. The working tree builds as usual (scripts/gpu_check.sh's way); a second copy of
# it, with csrc/ replaced by the baseline's, builds beside it in /tmp/ab_base, each with
# half the cores. Then each named run of the benchmark harness (`python -m
# torch_memopt.bench` and its arguments, without --out) runs on the baseline and on the
# change in turn, one process each, with the peers it names as the in-process anchor (Liger
# for the norms: torch.compile's compiles would take most of the call).
#   here:   mkdir -p .devrun && git archive BASE_REV csrc | gzip > .devrun/base_csrc.tgz
#   device: bash benchmarks/tune/ab_csrc_session.sh OUTDIR NAME "SUITE ARGS" [NAME "SUITE ARGS" ...]
#           (carry .whl and .devrun), e.g.
#           ... $OUT/ab rms "norm-grid --dtype bf16 --op rms_norm --peers liger --rep-ms 30
#               --no-cross-check --flush write"
# OUTDIR gets ab.txt and ab.tgz: the build logs, base/NAME/ and new/NAME/ (each run's JSON and
# printed table), packed again after each run (a device call returns a few files, not a tree).
# benchmarks/tune/ab_compare.py compares a run's two JSON files (base/NAME, new/NAME).
# While the machine is warm the two builds stay: a second call may run the loop alone
# (AB_SKIP_BUILD=1). With both builds made here beforehand (benchmarks/tune/ab_prebuild.sh;
# carry .devbuild/out too) nothing is compiled there.
# AB_TESTS="tests/test_x.py ...": those tests run first on the change's
# build (their tail in ab.txt, the log in the pack); a change that fails them is not timed.
set -uo pipefail
cd "$(dirname "$0")/../.."
usage='usage: ab_csrc_session.sh OUTDIR NAME "SUITE ARGS" [NAME "SUITE ARGS" ...]'
OUT=${1:?$usage}
shift
[ $# -ge 2 ] && [ $(($# % 2)) = 0 ] || { echo "$usage"; exit 2; }
WORK=/tmp/ab  # outside OUTDIR: only its pack comes back
rm -rf "$WORK" && mkdir -p "$WORK" "$OUT"
pack() { tar czf "$OUT/ab.tgz" -C "$(dirname "$WORK")" "$(basename "$WORK")"; }
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
"$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target /tmp/memopt_site .whl/*.whl
export PYTHONPATH=/tmp/memopt_site
BASE=/tmp/ab_base
# The system g++ as the host compiler: scripts/system_cxx.sh says why (built with the
# image's first g++, every TORCH_CHECK that formats a shape crashed the process).
source scripts/system_cxx.sh
source scripts/prebuilt.sh
# Both builds made on the CPU machine (benchmarks/tune/ab_prebuild.sh: .devbuild/out and
# .devrun/base_out), each used only while it was built from the sources here.
prebuilt_pair() {
  local new_pack base_pack
  new_pack=$(pack_for .devbuild/out) && base_pack=$(pack_for .devrun/base_out "$BASE") &&
    use_prebuilt "$new_pack" torch_memopt &&
    unpack_xz "$base_pack" "$BASE/torch_memopt/$(basename "$base_pack" .xz)"
}
if [ "${AB_SKIP_BUILD:-0}" != 1 ]; then
  rm -rf "$BASE" && mkdir -p "$BASE"
  assemble_base_tree "$BASE"
  start=$(date +%s)
  if prebuilt_pair; then
    echo "builds: prebuilt, new $(cat .devbuild/out/sources_hash)," \
      "base $(cat .devrun/base_out/sources_hash)" | tee "$OUT/ab.txt"
  else
    (cd "$BASE" && MAX_JOBS=8 "$PYTHON" setup.py build_ext --inplace > "$WORK/base_build.log" 2>&1) &
    MAX_JOBS=8 "$PYTHON" -m pip install --no-build-isolation --no-deps -e . > "$WORK/new_build.log" 2>&1
    new_rc=$?
    wait $!
    base_rc=$?
    echo "builds: new rc=$new_rc base rc=$base_rc in $(( $(date +%s) - start )) s" | tee "$OUT/ab.txt"
    [ "$new_rc" = 0 ] && [ "$base_rc" = 0 ] || { tail -20 "$WORK"/*_build.log; exit 1; }
  fi
fi
if [ -n "${AB_TESTS:-}" ]; then
  # shellcheck disable=SC2086  # a list of test files
  "$PYTHON" -m pytest -q -p no:cacheprovider -n 8 $AB_TESTS > "$WORK/tests.log" 2>&1
  tests_rc=$?
  tail -1 "$WORK/tests.log" | tee -a "$OUT/ab.txt"
  pack
  [ "$tests_rc" = 0 ] || exit 1
fi
bench() {  # bench BUILD NAME "SUITE ARGS": the harness from BUILD (new: the tree, base: $BASE)
  local dir=$PWD
  [ "$1" = base ] && dir=$BASE
  # shellcheck disable=SC2086  # the suite's arguments are words
  (cd "$dir" && timeout "${AB_RUN_LIMIT:-90}" "$PYTHON" -m torch_memopt.bench $3 \
    --out "$WORK/$1/$2" > "$WORK/$1_$2.txt" 2>&1)
  echo "$1 $2 rc=$?" | tee -a "$OUT/ab.txt"
  pack
}
while [ $# -ge 2 ]; do
  bench base "$1" "$2"
  bench new "$1" "$2"
  shift 2
done
