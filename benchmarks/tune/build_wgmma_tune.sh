#!/usr/bin/env bash
# Builds benchmarks/tune/wgmma_configs.cu (the wgmma rung's tuning variants, ping-pong among
# them) into a shared library for tune_wgmma.py, outside the extension:
#   bash benchmarks/tune/build_wgmma_tune.sh [OUT.so]   (default /tmp/wgmma_tune.so)
# The launchers include the kernel registry and the plan (torch's c10 headers), so those
# compile in too and the library links libc10 from the torch it runs beside. The system g++
# as the host compiler, as scripts/gpu_check.sh says why. JOBS (default: cores) nvcc at once.
# -fno-gnu-unique: the launchers' function-local statics (the per-device "shared memory opted
# in" bits) are otherwise STB_GNU_UNIQUE, one object across this library and torch_memopt's
# _C: a variant launched here first set the bit for the extension's own copy of the kernel,
# which then launched without the opt-in ("invalid argument" in torch_memopt.linear at
# 4096 x 3072 x 768, H200 2026-12-05).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/wgmma_tune.so}
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d)
INC=$("$PYTHON" -c "from torch.utils.cpp_extension import include_paths; print(' '.join('-I' + p for p in include_paths()))")
LIB=$("$PYTHON" -c "from torch.utils.cpp_extension import library_paths; print(library_paths()[0])")
CUINC=$("$PYTHON" -c "import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'include'))" 2>/dev/null || true)
HOST=()
[ -x /usr/bin/g++ ] && HOST=(-ccbin /usr/bin/g++)
FLAGS=(-gencode=arch=compute_90a,code=sm_90a -O3 -std=c++20 --expt-relaxed-constexpr
       -DMEMOPT_WGMMA_TUNING_VARIANTS -DMEMOPT_WITH_CUDA=1 -D_GLIBCXX_USE_CXX11_ABI=1 -Icsrc $INC
       ${CUINC:+-I$CUINC} -Xcompiler -fPIC,-fno-gnu-unique "${HOST[@]}")
SOURCES=(csrc/gemm/wgmma_sm90.cu csrc/gemm/wgmma_tiles_64.cu csrc/gemm/wgmma_tiles_128.cu
         csrc/gemm/wgmma_tiles_192.cu csrc/gemm/splitk_sm90.cu csrc/gemm/tma_map.cu
         benchmarks/tune/wgmma_configs.cu csrc/common/kernel_registry.cpp csrc/common/variants.cpp
         csrc/gemm/gemm_plan.cpp)
for f in "${SOURCES[@]}"; do
  nvcc "${FLAGS[@]}" -x cu -c "$f" -o "$WORK/$(basename "${f%.*}").o" &
  while [ "$(jobs -r | wc -l)" -ge "${JOBS:-$(nproc)}" ]; do sleep 1; done
done
wait
nvcc -gencode=arch=compute_90a,code=sm_90a "${HOST[@]}" -shared "$WORK"/*.o -o "$OUT" \
  -L"$LIB" -lc10 -Xlinker -rpath="$LIB"
rm -rf "$WORK"
echo "built $OUT"
