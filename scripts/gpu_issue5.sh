#!/usr/bin/env bash
# One device call for the issue-5 work (norms, softmax, fused add + norm): build
# and test through gpu_check.sh, then compute-sanitizer over every norm and
# softmax variant, the constant-memory case study, and the full norm benchmark
# (its JSON, chart and README section come back in OUTDIR). Short table last.
#   bash scripts/gpu_issue5.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_issue5.sh OUTDIR}
mkdir -p "$OUT"
MEMOPT_GPU_CHECK_BENCH=0 bash scripts/gpu_check.sh "$OUT/check" tests/test_norm_ladder.py \
  tests/test_softmax_ladder.py tests/test_add_norm.py tests/test_correctness.py tests/test_opcheck.py \
  tests/test_compile.py > "$OUT/check.txt" 2>&1
echo "tests: $(tail -1 "$OUT/check/tests.log")"
grep -E "^E  " "$OUT/check/tests.log" | sort | uniq | head -20
for tool in memcheck racecheck; do
  timeout 180 compute-sanitizer --tool "$tool" python3 benchmarks/norm_sanitize.py \
    > "$OUT/norm_$tool.txt" 2>&1
  echo "$tool rc=$?: $(tail -1 "$OUT/norm_$tool.txt")"
done
timeout 120 python3 benchmarks/constant_memory.py --out "$OUT/constant_memory_h200.json" \
  > "$OUT/constant_memory.txt" 2>&1
echo "constant_memory rc=$?"
timeout 420 python3 benchmarks/norm_bench.py --out "$OUT/norm_bench_h200.json" \
  > "$OUT/norm_bench.txt" 2>&1
echo "norm_bench rc=$?"
cat "$OUT/constant_memory.txt" | tail -7
grep -E "^(layer_norm|rms_norm|softmax|acceptance)" "$OUT/norm_bench.txt" | cut -c1-170
