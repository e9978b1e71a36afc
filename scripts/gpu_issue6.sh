#!/usr/bin/env bash
# One device call for the issue-6 work (drop-in modules, optimize_, enable(), CUDA
# graphs, real models): build and test through gpu_check.sh, then the end-to-end
# model benchmark for the models named in MODELS (default: all; one call may not
# fit all four with torch.compile: split them over calls). Short table last.
#   bash scripts/gpu_issue6.sh OUTDIR            # 1 GPU
#   MODELS=llama,gpt2 bash scripts/gpu_issue6.sh OUTDIR
#   MODELS=none bash scripts/gpu_issue6.sh OUTDIR    # tests only
# On a 2-GPU machine (kind nvidia-h200-x2) TP=1 also runs benchmarks/tp_mlp.py
# under torchrun with 2 ranks, and the cuda:1 test runs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_issue6.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
MEMOPT_GPU_CHECK_BENCH=0 timeout 300 bash scripts/gpu_check.sh "$OUT/check" tests/test_nn_modules.py \
  tests/test_optimize.py tests/test_real_models.py tests/test_graphs_and_devices.py \
  tests/test_compile.py tests/test_backward.py tests/test_softmax_ladder.py -rP > "$OUT/check.txt" 2>&1
echo "tests: $(tail -1 "$OUT/check/tests.log")"
grep -E "^E  |FAILED" "$OUT/check/tests.log" | sort | uniq | head -20
grep -E "top-1 against stock" "$OUT/check/tests.log" | sort | uniq
# The device tool brings back at most 8 files: the build and test logs travel as one.
tar -czf "$OUT/check.tgz" -C "$OUT" check check.txt && rm -rf "$OUT/check" "$OUT/check.txt"
if [ "${TP:-0}" = 1 ]; then
  timeout 120 torchrun --nproc_per_node=2 benchmarks/tp_mlp.py > "$OUT/tp_mlp.txt" 2>&1
  echo "tp_mlp rc=$?"; grep -v "^W1" "$OUT/tp_mlp.txt" | tail -5
fi
[ "${MODELS:-}" = none ] && exit 0
# --merge over the committed file: a call measuring some models keeps the records of
# the others (copy the last call's JSON into benchmarks/results/ before the next). The
# JSON is rewritten after each model, in $OUT, so a call cut short keeps what it measured.
cp benchmarks/results/bench_model_h200.json "$OUT/" 2>/dev/null
timeout ${BENCH_TIMEOUT:-400} python3 benchmarks/bench_model.py --models "${MODELS:-llama,gpt2,bert,vit}" \
  --merge --out "$OUT/bench_model_h200.json" > "$OUT/bench_model.txt" 2>&1
echo "bench_model rc=$?"
grep -E "^(llama|gpt2|bert|vit) " "$OUT/bench_model.txt"
