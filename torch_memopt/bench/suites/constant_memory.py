"""The constant-memory case study of our source material: LayerNorm's normalize step,
y = (x − mean[row]) · rstd[row] · γ[c] + β[c] in fp32, in four kernels that differ only
in where the per-row stats and per-channel weights are read from
(benchmarks/constant_memory/case_study.cu, built with nvcc at run time and loaded with
ctypes): plain global loads (``global``, the peer every other kernel is judged against),
stats in ``__constant__`` (``const_stats``), weights in ``__constant__``
(``const_weights``) and weights through ``__ldg`` (``ldg_weights``). × best is then
× global, beside the source's claim and whether it holds here. The stats and weights
live in ``__constant__`` once uploaded, so the inputs do not rotate (no Timer
cross-check).
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

from ..case import Case, Impl
from ..environment import CHECKOUT
from ..peers import Unavailable
from ..report import Column

NAME = "constant-memory"
TITLE = "the case study of where LayerNorm's stats and weights are read from"
ABOUT = (
    "The constant-memory case study of our source material: LayerNorm's normalize step in "
    "four kernels that differ only in where the per-row stats and per-channel weights are "
    "read from, each against plain global loads (`global`), beside the source's claim.")

SOURCE = CHECKOUT / "benchmarks" / "constant_memory" / "case_study.cu"
KERNELS = ("global", "const_stats", "const_weights", "ldg_weights")  # case_study.cu's Source
CLAIMS = {"const_stats": "2.3×", "const_weights": "0.85× (−15%)", "ldg_weights": "> 1×"}
ROWS, CHANNELS = 2048, 4096  # what __constant__ holds (64 KB a module)
EPS = 1e-5


def verdict(kernel: str, vs_global: float | None) -> str:
    """Whether the source's claim for ``kernel`` holds at our speed-up over ``global``.

    The claims are 2.3× (const_stats), −15% (const_weights) and a win (ldg_weights); the
    bands leave room for timing noise (±2%) and for "about" (2× for 2.3×, 5-25% slower for
    −15%) without letting a claim pass on a figure that says something else. A kernel
    slower by far more than −15% is still called slower, since the direction was right.
    """
    if vs_global is None:
        return "—"
    if kernel == "const_stats":
        return "holds" if vs_global >= 2.0 else f"does not hold: {vs_global:.2f}× measured"
    if kernel == "const_weights":
        if vs_global < 0.75:
            return f"slower, as claimed, but by {round((1 - vs_global) * 100)}%"
        return "holds" if vs_global <= 0.95 else f"does not hold: {vs_global:.2f}× measured"
    if kernel == "ldg_weights":
        return "holds" if vs_global > 1.02 else f"no win: {vs_global:.2f}× measured"
    return "—"  # a kernel the source makes no claim about


COLUMNS = [Column("source's claim", lambda r: CLAIMS.get(r["variant"], "—"), False),
           Column("verdict", lambda r: verdict(r["variant"], r["ratio"]), False)]
SUMMARY_VARIANT = None  # every kernel: each is its own claim


def build_library(directory: Path) -> ctypes.CDLL:
    if not SOURCE.exists():
        raise Unavailable(f"{SOURCE} is not here: the case study runs from a checkout")
    if shutil.which("nvcc") is None:
        raise Unavailable("nvcc is not on PATH: the case study is compiled at run time")
    library = directory / "case_study.so"
    subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-shared",
                    "-Xcompiler", "-fPIC", str(SOURCE), "-o", str(library)], check=True)
    return ctypes.CDLL(str(library))


def cases(ctx) -> list:
    if not ctx.cuda:
        raise Unavailable("the case study's kernels need a CUDA GPU")
    if not ctx.wants_op("normalize") or torch.float32 not in ctx.pick_dtypes([torch.float32]):
        return []
    lib = build_library(Path(tempfile.mkdtemp(prefix="memopt_constant_memory_")))
    ptr = ctypes.c_void_p
    device = ctx.device
    x = torch.randn(ROWS, CHANNELS, device=device)
    mean, rstd = x.mean(1), torch.rsqrt(x.var(1, unbiased=False) + EPS)
    gamma, beta = torch.randn(CHANNELS, device=device), torch.randn(CHANNELS, device=device)
    if lib.case_study_upload(*(ptr(t.data_ptr()) for t in (mean, rstd, gamma, beta)), ROWS, CHANNELS):
        raise RuntimeError("case_study_upload failed")

    def kernel(source: int):
        def run(x, mean, rstd, gamma, beta):
            y = torch.empty_like(x)
            stream = ptr(torch.cuda.current_stream(device).cuda_stream)
            args = [ptr(t.data_ptr()) for t in (x, mean, rstd, gamma, beta, y)]
            if lib.case_study_run(source, *args, ROWS, CHANNELS, stream):
                raise RuntimeError(f"case_study_run({KERNELS[source]}) failed")
            return y
        return run

    impls = [Impl(name, "peer" if name == "global" else "ours", lambda i=i: kernel(i))
             for i, name in enumerate(KERNELS)]
    inputs = (x, mean, rstd, gamma, beta)
    return [Case(
        suite=NAME, op="normalize", dtype="float32", shape={"rows": ROWS, "N": CHANNELS},
        impls=impls, make_inputs=lambda: inputs,
        reference=lambda i: (i[0].double() - i[1].double()[:, None]) * i[2].double()[:, None]
        * i[3].double() + i[4].double(),
        tolerance=1e-5, bytes=2.0 * ROWS * CHANNELS * 4, rotates=False,
        label="y = (x − mean) · rstd · γ + β")]
