#!/usr/bin/env bash
# One device call for the wgmma work on this branch: build the tuning library
# with plain nvcc, check and time the variants beside cuBLAS, profile the plain
# kernel and cuBLAS at 4096^3 (issue-active and stall reasons), and print a
# short table last. Everything lands in OUTDIR.
#   bash benchmarks/tune/gpu_wgmma_session.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: gpu_wgmma_session.sh OUTDIR}
mkdir -p "$OUT"
# A library built beforehand on a machine without a GPU (carried in) saves
# the minute of nvcc: WGMMA_TUNE_LIB=path.
LIB=${WGMMA_TUNE_LIB:-/tmp/wgmma_tune.so}
[ -f "$LIB" ] || nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -DMEMOPT_WGMMA_TUNING_VARIANTS -Icsrc \
  -shared -Xcompiler -fPIC csrc/gemm/wgmma_sm90.cu csrc/gemm/splitk_sm90.cu csrc/gemm/tma_map.cu benchmarks/tune/wgmma_configs.cu -o "$LIB" \
  > "$OUT/nvcc.log" 2>&1 || { echo "nvcc failed"; tail -20 "$OUT/nvcc.log"; exit 1; }
timeout 300 python3 benchmarks/tune/tune_wgmma.py --library "$LIB" --out "$OUT/tune_wgmma.json" \
  > "$OUT/tune_wgmma.txt" 2>&1
echo "tune rc=$?"
# The profiled process: one call of variant NCU_CONFIG (default 0) and one cuBLAS.
cat > /tmp/wgmma_ncu_child.py <<'PY'
import sys, torch
sys.path.insert(0, "benchmarks/tune")
import tune_wgmma as t
lib = t.load(sys.argv[1])
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
t.runner(lib, int(sys.argv[2]))(a, b, True, None, 0, out)
torch.mm(a, b.t())
torch.cuda.synchronize()
PY
timeout 240 ncu --clock-control none \
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,lts__t_bytes.sum,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active' \
  python3 /tmp/wgmma_ncu_child.py "$LIB" "${NCU_CONFIG:-0}" > "$OUT/ncu_wgmma.txt" 2>&1
echo "ncu rc=$?"
grep -E "^  [a-zA-Z_]|duration|issue_active|gmma|lts__t_bytes" "$OUT/ncu_wgmma.txt" | cut -c1-120 | tail -20
cat "$OUT/tune_wgmma.txt"
