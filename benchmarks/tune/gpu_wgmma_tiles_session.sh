#!/usr/bin/env bash
# One device call for new wgmma output tiles: build and test through the GPU
# runner (the GEMM test files), compute-sanitizer memcheck and racecheck over
# the tiles named in TILES, then the tile sweeps (the Llama layers and the
# hidden-768 encoders, every built tile) and the rule's fit over both. The
# sweeps' JSON and the fit land in OUTDIR beside gpu_check.sh's summary and
# logs; the fit's table prints last.
#   TILES=128x192,64x192 bash benchmarks/tune/gpu_wgmma_tiles_session.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gpu_wgmma_tiles_session.sh OUTDIR}
mkdir -p "$OUT/tiles"
LOG="$OUT/tiles"
MEMOPT_PYTEST="${MEMOPT_PYTEST:-tests/test_gemm_tensor_core.py tests/test_gemm_plan.py tests/test_kernel_info.py}" \
  bash scripts/gpu_check.sh "$OUT" > "$LOG/gpu_check.txt" 2>&1
tail -8 "$LOG/gpu_check.txt"
# gpu_check.sh's build and wheels, for the steps below.
[ -d /tmp/memopt_site ] && export PYTHONPATH=/tmp/memopt_site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
for tool in memcheck racecheck; do
  timeout 300 compute-sanitizer --tool "$tool" python3 scripts/sanitize_gemm.py --rungs wgmma \
    --tiles "${TILES:-128x192,64x192}" > "$LOG/sanitize_gemm_$tool.txt" 2>&1
  echo "sanitize_gemm wgmma $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitize_gemm_$tool.txt" | tail -1), $(tail -1 "$LOG/sanitize_gemm_$tool.txt")"
done
timeout 400 python3 benchmarks/tune/sweep_wgmma_tiles.py --out "$OUT/wgmma_tiles_h200.json" \
  > "$LOG/sweep.txt" 2>&1; echo "sweep rc=$?"
timeout 150 python3 benchmarks/tune/sweep_wgmma_tiles.py --encoders \
  --out "$OUT/wgmma_tiles_encoders_h200.json" > "$LOG/sweep_encoders.txt" 2>&1
echo "sweep --encoders rc=$?"
python3 benchmarks/tune/fit_wgmma_tile_rule.py "$OUT/wgmma_tiles_h200.json" \
  "$OUT/wgmma_tiles_encoders_h200.json" > "$LOG/fit.txt" 2>&1
tar -czf "$OUT/tiles.tgz" -C "$OUT" tiles && rm -rf "$LOG"
tar -xzOf "$OUT/tiles.tgz" tiles/sweep.txt | grep -A80 "^ *M  *N" | head -60
tar -xzOf "$OUT/tiles.tgz" tiles/fit.txt
