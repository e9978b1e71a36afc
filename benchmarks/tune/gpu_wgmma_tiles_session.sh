#!/usr/bin/env bash
# One device call for new wgmma output tiles: build and test through the GPU
# runner (the GEMM test files), the tile sweeps (the Llama layers and the
# hidden-768 encoders, every built tile) and the rule's fit over both, then
# compute-sanitizer memcheck and racecheck over the tiles named in TILES.
# OUTDIR gets gpu_check.sh's three files, the sweeps' JSON and tiles/ (the
# sweeps' tables, the fit, the sanitizer runs): 8 files, what a device call
# brings back, written as they finish so that a call cut short keeps them.
#   TILES=128x192,64x192 bash benchmarks/tune/gpu_wgmma_tiles_session.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gpu_wgmma_tiles_session.sh OUTDIR}
LOG="$OUT/tiles"
mkdir -p "$LOG"
MEMOPT_PYTEST="${MEMOPT_PYTEST:-tests/test_gemm_tensor_core.py tests/test_gemm_plan.py tests/test_kernel_info.py}" \
  bash scripts/gpu_check.sh "$OUT" > /dev/null 2>&1
tail -6 "$OUT/summary.txt"
# gpu_check.sh's build and wheels, for the steps below.
[ -d /tmp/memopt_site ] && export PYTHONPATH=/tmp/memopt_site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
timeout "${SWEEP_TIMEOUT:-300}" python3 benchmarks/tune/sweep_wgmma_tiles.py \
  --out "$OUT/wgmma_tiles_h200.json" > "$LOG/sweep.txt" 2>&1
echo "sweep rc=$?"
timeout 120 python3 benchmarks/tune/sweep_wgmma_tiles.py --encoders \
  --out "$OUT/wgmma_tiles_encoders_h200.json" >> "$LOG/sweep.txt" 2>&1
echo "sweep --encoders rc=$?"
python3 benchmarks/tune/fit_wgmma_tile_rule.py "$OUT/wgmma_tiles_h200.json" \
  "$OUT/wgmma_tiles_encoders_h200.json" > "$LOG/fit.txt" 2>&1
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool" >> "$LOG/sanitize.txt"
  timeout 150 compute-sanitizer --tool "$tool" python3 scripts/sanitize_gemm.py --rungs wgmma \
    --tiles "${TILES:-128x192,64x192}" >> "$LOG/sanitize.txt" 2>&1
  echo "sanitize_gemm wgmma $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitize.txt" | tail -1)"
done
grep -E "^ +M +N|^ *[0-9]+ +[0-9]+ +[0-9]+ " "$LOG/sweep.txt" | cut -c1-120
cat "$LOG/fit.txt"
