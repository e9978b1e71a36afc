#!/usr/bin/env bash
# One device call for issue 7 (the memory-hierarchy probe): build and test through
# gpu_check.sh (the probe kernels' tests and kernel_info), then the probe itself,
# --quick first (its time is an acceptance figure: under 30 s), then the full run
# with its JSON and plots (under 3 minutes). Short table last.
#   bash scripts/gpu_issue7.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_issue7.sh OUTDIR}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
MEMOPT_GPU_CHECK_BENCH=0 timeout 240 bash scripts/gpu_check.sh "$OUT/check" tests/test_probes_gpu.py \
  tests/test_probe_cli.py tests/test_kernel_info.py > "$OUT/check.txt" 2>&1
echo "tests: $(tail -1 "$OUT/check/tests.log")"
grep -E "^E  |FAILED" "$OUT/check/tests.log" | sort | uniq | head -20
elapsed() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
start=$(date +%s.%N)
timeout 60 python3 -m torch_memopt.probe --quick > "$OUT/probe_quick.txt" 2>&1
echo "probe --quick rc=$? in $(elapsed "$start") s (whole process, import and CUDA start included)"
start=$(date +%s.%N)
timeout 240 python3 -m torch_memopt.probe --out "$OUT/probe_h200.json" --plot-dir "$OUT/probe" \
  > "$OUT/probe.txt" 2>&1
echo "probe rc=$? in $(elapsed "$start") s (whole process)"
tail -40 "$OUT/probe.txt"
# The device tool brings back at most 8 files: the logs travel as one archive.
tar -czf "$OUT/logs.tgz" -C "$OUT" check check.txt probe_quick.txt probe.txt &&
  rm -rf "$OUT/check" "$OUT/check.txt" "$OUT/probe_quick.txt" "$OUT/probe.txt"
