"""The constant-memory case study of our source material on one CUDA GPU (issue 5).

    python benchmarks/constant_memory.py [--library case_study.so] [--rows 2048 --channels 4096]

The normalize step of LayerNorm, y = (x - mean[row]) * rstd[row] * gamma[c] + beta[c]
(fp32), in four kernels that differ only in where stats and weights come from
(benchmarks/constant_memory/case_study.cu): ``global`` (plain loads, the baseline),
``const_stats`` (per-row stats in __constant__: a warp-uniform address, broadcast),
``const_weights`` (per-channel weights in __constant__: 32 addresses a warp, serialized)
and ``ldg_weights`` (weights through __ldg). Each is checked against torch on the same
inputs, then timed with triton.testing.do_bench (median, L2 flushed). The table puts our
speed-up over ``global`` beside the source's claim: 2.3x for constant stats, -15% for
constant weights, a win for __ldg. The library is built with nvcc when --library is not
given. JSON to --out (default benchmarks/results/constant_memory_h200.json): meta, shape,
and one record per kernel {kernel, us, gbps, vs_global, claim, rel_err}. Exit 2 without a
GPU.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ladder import run_meta
from ladder.help_format import HelpFormatter
from ladder.json_safe import json_safe

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "constant_memory" / "case_study.cu"
KERNELS = ("global", "const_stats", "const_weights", "ldg_weights")
# The source's figure for each kernel, as a speed-up over the global-memory baseline.
CLAIMS = {"global": None, "const_stats": "2.3×", "const_weights": "0.85× (−15%)",
          "ldg_weights": "> 1×"}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    parser.add_argument("--library", type=Path, default=None,
                        help="a prebuilt case_study.so (else built with nvcc into a temp dir)")
    parser.add_argument("--rows", type=int, default=2048, help="rows (at most 2048: __constant__)")
    parser.add_argument("--channels", type=int, default=4096,
                        help="channels (at most 4096: __constant__)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "constant_memory_h200.json")
    return parser.parse_args(argv)


def build(directory: Path) -> Path:
    library = directory / "case_study.so"
    subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-shared",
                    "-Xcompiler", "-fPIC", str(SOURCE), "-o", str(library)], check=True)
    return library


def speedup_rows(records: list[dict]) -> list[list[str]]:
    """The printed table: kernel, µs, GB/s, × global, the source's claim."""
    rows = []
    for r in records:
        rows.append([r["kernel"], f"{r['us']:.1f}", f"{r['gbps']:,.0f}",
                     f"{r['vs_global']:.2f}×", r["claim"] or "—"])
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("constant_memory.py needs a CUDA GPU; none is visible.")
        return 2
    from triton.testing import do_bench

    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        library = args.library or build(Path(tmp))
        lib = ctypes.CDLL(str(library))
        rows, channels = args.rows, args.channels
        if rows > lib.case_study_max_rows() or channels > lib.case_study_max_channels():
            print(f"at most {lib.case_study_max_rows()} rows and {lib.case_study_max_channels()} "
                  "channels fit in __constant__")
            return 1
        x = torch.randn(rows, channels, device="cuda")
        mean, rstd = x.mean(1), torch.rsqrt(x.var(1, unbiased=False) + 1e-5)
        gamma, beta = torch.randn(channels, device="cuda"), torch.randn(channels, device="cuda")
        ref = (x - mean[:, None]) * rstd[:, None] * gamma + beta
        ptr = ctypes.c_void_p
        assert lib.case_study_upload(ptr(mean.data_ptr()), ptr(rstd.data_ptr()), ptr(gamma.data_ptr()),
                                     ptr(beta.data_ptr()), rows, channels) == 0
        stream = ptr(torch.cuda.current_stream().cuda_stream)
        moved = 2 * x.numel() * 4  # x read + y written; stats and weights are small
        records = []
        for source, name in enumerate(KERNELS):
            y = torch.full_like(x, float("nan"))

            def run():
                return lib.case_study_run(source, ptr(x.data_ptr()), ptr(mean.data_ptr()),
                                          ptr(rstd.data_ptr()), ptr(gamma.data_ptr()),
                                          ptr(beta.data_ptr()), ptr(y.data_ptr()), rows, channels,
                                          stream)

            assert run() == 0, name
            torch.cuda.synchronize()
            err = ((y.double() - ref.double()).norm() / ref.double().norm()).item()
            ms = do_bench(run, return_mode="median")
            records.append({"kernel": name, "us": ms * 1e3, "gbps": moved / ms / 1e6,
                            "claim": CLAIMS[name], "rel_err": err})
        base = records[0]["us"]
        for r in records:
            r["vs_global"] = base / r["us"]
    wrong = [r["kernel"] for r in records if not r["rel_err"] < 1e-5]
    headers = ["kernel", "µs", "GB/s", "× global", "source's claim"]
    table = [headers] + speedup_rows(records)
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
    if wrong:
        print("WRONG results:", ", ".join(wrong))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(json_safe({
        "meta": run_meta.environment(True, args.seed), "shape": {"rows": rows, "channels": channels},
        "records": records}), indent=1) + "\n")
    print(f"wrote {args.out}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
