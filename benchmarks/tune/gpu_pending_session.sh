#!/usr/bin/env bash
# One device call for the work that waits on a GPU after the sessions without one
# (2026-12-05): build and test through the GPU runner, the bf16 norm grids the early
# instances' register path changed (layer_norm, add_rms_norm, rms_norm; layer_norm under
# the deep flush too), the host cost of a call (the wrappers through the ops' overloads,
# strided_rows), and flush survival under the deep flush's final form.
# Each step is cut by its own timeout so that a slow one still leaves the rest.
# OUTDIR gets gpu_check.sh's three files and pending.tgz (every step's log and JSON),
# packed again after each step.
#   MEMOPT_GIT_COMMIT=$(git rev-parse --short HEAD) bash benchmarks/tune/gpu_pending_session.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gpu_pending_session.sh OUTDIR}
WORK=/tmp/pending  # outside OUTDIR: only its pack comes back, as one file
rm -rf "$WORK" && mkdir -p "$WORK"
MEMOPT_PYTEST="${MEMOPT_PYTEST:-tests/test_bench_core.py tests/test_norm_ladder.py tests/test_add_norm.py tests/test_softmax_ladder.py tests/test_gemm_tensor_core.py tests/test_gemm_plan.py tests/test_kernel_info.py tests/test_sass_audit.py tests/test_opcheck.py}" \
  bash scripts/gpu_check.sh "$OUT" > "$WORK/gpu_check.txt" 2>&1
tail -6 "$OUT/summary.txt"
[ -d /tmp/memopt_site ] && export PYTHONPATH=/tmp/memopt_site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
step() {  # step NAME SECONDS COMMAND...: run, log to NAME.txt, print its rc, re-pack
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$WORK/$name.txt" 2>&1
  echo "$name rc=$?"
  tar czf "$OUT/pending.tgz" -C /tmp pending  # a call cut at its limit keeps what ran
}
grid() {  # grid OP FLUSH: the bf16 norm grid of OP under FLUSH
  step "grid_$1_$2" 120 python3 -m torch_memopt.bench norm-grid --dtype bf16 --op "$1" \
    --rep-ms 30 --no-cross-check --flush "$2" --out "$WORK/grid_$1_$2"
}
# Most telling first: the grids the register path changed, under the flush of the
# committed grids (write), then the rest.
grid layer_norm write
grid add_rms_norm write
grid rms_norm write
step host_cost 60 python3 benchmarks/tune/host_cost.py --out "$WORK/host_cost.json"
grid layer_norm deep
step flush_survival 150 python3 benchmarks/tune/flush_survival.py --out "$WORK/flush_survival.json"
grep -E "^(call|[a-z_ +,]+ +[0-9.]+ +[0-9.]+$)" "$WORK/host_cost.txt" | head -14
