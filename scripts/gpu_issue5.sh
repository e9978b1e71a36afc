#!/usr/bin/env bash
# One device call for the issue-5 work (norms, softmax, fused add + norm): build
# and test through gpu_check.sh, then compute-sanitizer over every norm and
# softmax variant, the constant-memory case study, the full norm benchmark and
# the fused add + norm benchmark (their JSON come back in OUTDIR). Short table last.
#   bash scripts/gpu_issue5.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_issue5.sh OUTDIR}
mkdir -p "$OUT"
MEMOPT_GPU_CHECK_BENCH=0 timeout 200 bash scripts/gpu_check.sh "$OUT/check" tests/test_norm_ladder.py \
  tests/test_softmax_ladder.py tests/test_add_norm.py tests/test_norm_large_index.py \
  tests/test_correctness.py tests/test_opcheck.py tests/test_compile.py -k "norm or softmax" \
  > "$OUT/check.txt" 2>&1
echo "tests: $(tail -1 "$OUT/check/tests.log")"
grep -E "^E  " "$OUT/check/tests.log" | sort | uniq | head -20
timeout 60 python3 benchmarks/constant_memory.py --out "$OUT/constant_memory_h200.json" \
  > "$OUT/constant_memory.txt" 2>&1
echo "constant_memory rc=$?"
timeout 180 python3 benchmarks/norm_bench.py --out "$OUT/norm_bench_h200.json" \
  > "$OUT/norm_bench.txt" 2>&1
echo "norm_bench rc=$?"
timeout 100 python3 benchmarks/add_norm_bench.py --out "$OUT/add_norm_h200.json" \
  > "$OUT/add_norm.txt" 2>&1
echo "add_norm_bench rc=$?"
cat "$OUT/add_norm.txt" | grep -v "^W1"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool "$tool" python3 benchmarks/norm_sanitize.py \
    > "$OUT/norm_$tool.txt" 2>&1
  echo "$tool rc=$?: $(tail -1 "$OUT/norm_$tool.txt")"
done
cat "$OUT/constant_memory.txt" | tail -7
grep -E "^(layer_norm|rms_norm|softmax|acceptance)" "$OUT/norm_bench.txt" | cut -c1-170
