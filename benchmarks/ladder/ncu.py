"""Nsight Compute counters per rung: one child process per rung, one call profiled.

The parent runs, for each rung, ``ncu ... python ladder.py --ncu-child RUNG`` (see
``command``). The child makes its inputs, then calls the rung once inside the NVTX
push/pop range ``memopt_ladder``; ncu profiles exactly the kernels launched in that
range, whatever they are named, so a rung is measured alone, and nothing else in
the child (input generation) is. Should the NVTX filter profile nothing, the fallback
filter is any kernel whose demangled name contains ``gemm`` (the child launches no
other GEMM). A metric this ncu does not know is dropped and the rung retried; the
settings that worked are kept for the next rungs.

``--clock-control none`` leaves the GPU at its own clocks (the timing pass runs
unlocked too); ncu's default cache control flushes caches before every replay pass,
so each pass sees a cold L2 like the timing pass. ``--print-units base`` makes bytes
bytes and times nanoseconds; ``--print-kernel-base mangled`` gives names that match
cuobjdump's, which maps rungs to resource entries exactly.

Metrics (the diagnostic set of the ladder's source material, plus launch facts):
global-load sectors per request (4 = fully coalesced fp32 warp load, 32 = one sector
per thread), shared-memory bank conflicts, achieved occupancy, DRAM throughput and
bytes. cp.async (``ldgsts``) loads are counted apart from ordinary loads, so the rungs
that use it report ``global_ldgsts_sectors_per_request``.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from .rungs import Size

NVTX_RANGE = "memopt_ladder"
NAME_FILTER = "regex:gemm"

REQUIRED_METRICS = (
    "gpu__time_duration.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum",
)
OPTIONAL_METRICS = (
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__block_size",
    "launch__grid_size",
)

TIME_UNITS_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3,
                 "msecond": 1.0, "ms": 1.0, "second": 1e3, "s": 1e3}
BYTE_PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
               "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
BYTE_UNIT = re.compile(r"^(|K|M|G|T|Ki|Mi|Gi|Ti)(?:byte|B)$")

Runner = Callable[[list[str], float], tuple[int, str]]


def find_ncu() -> str | None:
    """ncu on PATH, under CUDA_HOME / /usr/local/cuda, or the newest /opt/nvidia/nsight-compute."""
    found = shutil.which("ncu")
    if found:
        return found
    for root in filter(None, [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]):
        candidate = Path(root) / "bin" / "ncu"
        if candidate.is_file():
            return str(candidate)
    installs = sorted(Path("/opt/nvidia/nsight-compute").glob("*/ncu"))
    return str(installs[-1]) if installs else None


def command(ncu: str, metrics: list[str], filter_mode: str, log_file: str,
            child: list[str]) -> list[str]:
    """The ncu command line profiling ``child``; ``filter_mode`` is "nvtx" or "name"."""
    head = [
        ncu, "--clock-control", "none", "--csv", "--page", "details",
        "--print-units", "base", "--print-kernel-base", "mangled",
        "--metrics", ",".join(metrics), "--log-file", log_file,
    ]
    if filter_mode == "nvtx":
        head += ["--nvtx", "--nvtx-include", f"{NVTX_RANGE}/"]
    else:
        head += ["--kernel-name-base", "demangled", "--kernel-name", NAME_FILTER]
    return head + child


def parse_number(text: str | None) -> float | None:
    """``"1,234.5"`` -> 1234.5; ``"n/a"``, empty or anything else non-numeric -> None."""
    if text is None:
        return None
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def parse_csv(text: str) -> list[dict]:
    """The kernels of an ``ncu --csv --page details`` report, in launch order, each with
    ``metrics``: name -> {"value", "unit"}. Lines before the header (ncu's ``==PROF==``
    chatter, the application's own output) are skipped; columns are found by name, so
    the extra NVTX columns ``--nvtx`` adds do not matter."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        return []
    body = [lines[start]] + [line for line in lines[start + 1:] if line.startswith('"')]
    kernels: dict[str, dict] = {}
    for row in csv.DictReader(body):
        if not row.get("Metric Name"):
            continue
        kernel = kernels.setdefault(row["ID"], {
            "id": row["ID"],
            "name": row.get("Kernel Name"),
            "block": row.get("Block Size"),
            "grid": row.get("Grid Size"),
            "metrics": {},
        })
        kernel["metrics"][row["Metric Name"]] = {
            "value": parse_number(row.get("Metric Value")),
            "unit": (row.get("Metric Unit") or "").strip(),
        }
    return list(kernels.values())


def _value(kernel: dict, name: str) -> float | None:
    return (kernel["metrics"].get(name) or {}).get("value")


def _in_bytes(kernel: dict, name: str) -> float | None:
    entry = kernel["metrics"].get(name) or {}
    value, unit = entry.get("value"), entry.get("unit", "")
    match = BYTE_UNIT.match(unit)
    return None if value is None else value * (BYTE_PREFIX[match.group(1)] if match else 1)


def _in_ms(kernel: dict, name: str) -> float | None:
    entry = kernel["metrics"].get(name) or {}
    value = entry.get("value")
    return None if value is None else value * TIME_UNITS_MS.get(entry.get("unit", ""), 1e-6)


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def derive(kernel: dict, size: Size) -> dict:
    """The figures the ncu table shows, from one kernel's raw metrics."""
    dram_bytes = _in_bytes(kernel, "dram__bytes.sum")
    return {
        "duration_ms": _in_ms(kernel, "gpu__time_duration.sum"),
        "global_ld_sectors_per_request": _ratio(
            _value(kernel, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
            _value(kernel, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
        "global_ldgsts_sectors_per_request": _ratio(
            _value(kernel, "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"),
            _value(kernel, "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum")),
        "smem_bank_conflicts": _value(kernel, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
        "smem_bank_conflicts_ld": _value(
            kernel, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        "smem_bank_conflicts_st": _value(
            kernel, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        "achieved_occupancy_pct": _value(kernel, "sm__warps_active.avg.pct_of_peak_sustained_active"),
        "theoretical_occupancy_pct": _value(kernel, "sm__maximum_warps_per_active_cycle_pct"),
        "sm_throughput_pct": _value(kernel, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram_throughput_pct": _value(kernel, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram_bytes": dram_bytes,
        "dram_bytes_over_compulsory": _ratio(dram_bytes, size.fp32_bytes),
        "registers_per_thread": _value(kernel, "launch__registers_per_thread"),
        "smem_static_bytes": _in_bytes(kernel, "launch__shared_mem_per_block_static"),
        "smem_dynamic_bytes": _in_bytes(kernel, "launch__shared_mem_per_block_dynamic"),
        "block_size": _value(kernel, "launch__block_size"),
        "grid_size": _value(kernel, "launch__grid_size"),
    }


def main_kernel(kernels: list[dict]) -> int:
    """Index of the longest kernel (a rung launching a helper kernel is judged by its GEMM)."""
    durations = [_in_ms(k, "gpu__time_duration.sum") or 0.0 for k in kernels]
    return max(range(len(kernels)), key=durations.__getitem__)


def rejected_metrics(text: str, metrics: list[str]) -> list[str]:
    """The requested metrics ncu's error lines name (an unknown metric, say); all the
    optional ones when an error is about metrics but names none of ours."""
    errors = "\n".join(line for line in text.splitlines() if "ERROR" in line or "rror" in line)
    named = [m for m in metrics
             if m in errors or re.search(rf"\b{re.escape(m.split('.')[0])}\b", errors)]
    if named:
        return named
    if re.search(r"metric", errors, re.IGNORECASE):
        return [m for m in metrics if m not in REQUIRED_METRICS]
    return []


def run_subprocess(cmd: list[str], timeout: float) -> tuple[int, str]:
    """Run ``cmd`` (its ``--log-file`` is read back and put first) and return (rc, text)."""
    log_file = cmd[cmd.index("--log-file") + 1]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, tail = result.returncode, result.stdout + "\n" + result.stderr
    except subprocess.TimeoutExpired:
        rc, tail = 124, f"ncu timed out after {timeout:.0f} s"
    log = Path(log_file).read_text(errors="replace") if Path(log_file).exists() else ""
    return rc, log + "\n" + tail


class Profiler:
    """Profiles rung after rung, keeping the metric list and filter that worked."""

    def __init__(self, ncu: str, child: Callable[[str], list[str]], size: Size, *,
                 runner: Runner = run_subprocess, timeout: float = 300.0,
                 log: Callable[[str], None] = print):
        self.ncu, self.child, self.size = ncu, child, size
        self.runner, self.timeout, self.log = runner, timeout, log
        self.metrics = list(REQUIRED_METRICS + OPTIONAL_METRICS)
        self.filter_mode = "nvtx"

    def profile(self, variant: str) -> dict:
        record = {"variant": variant, "status": "error", "reason": None, "filter": None,
                  "kernels": [], "main_kernel": None, "derived": None}
        for _ in range(len(self.metrics) + 2):
            with tempfile.TemporaryDirectory() as scratch:
                cmd = command(self.ncu, self.metrics, self.filter_mode,
                              str(Path(scratch) / "ncu.log"), self.child(variant))
                rc, text = self.runner(cmd, self.timeout)
            kernels = parse_csv(text)
            if kernels:
                main = main_kernel(kernels)
                record.update(status="ok", filter=self.filter_mode, kernels=kernels,
                              main_kernel=main, derived=derive(kernels[main], self.size))
                return record
            if "ERR_NVGPUCTRPERM" in text:  # no access to the counters: no retry can help
                record["reason"] = "ncu: ERR_NVGPUCTRPERM (no permission for GPU performance counters)"
                return record
            dropped = rejected_metrics(text, self.metrics)
            if dropped and len(dropped) < len(self.metrics):
                self.log(f"  ncu rejected {', '.join(dropped)}: retrying without")
                self.metrics = [m for m in self.metrics if m not in dropped]
                continue
            if self.filter_mode == "nvtx" and rc != 124:
                self.log("  ncu profiled nothing in the NVTX range: "
                         f"retrying with --kernel-name {NAME_FILTER}")
                self.filter_mode = "name"
                continue
            record["reason"] = f"ncu exit {rc}: " + " | ".join(_error_lines(text)[-4:])
            return record
        record["reason"] = "ncu gave no kernels after every fallback"
        return record


def _error_lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    flagged = [line for line in lines if "ERROR" in line or "WARNING" in line or "rror" in line]
    return flagged or lines[-4:]


def version(ncu: str) -> str | None:
    try:
        result = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    return lines[-1].strip() if lines else None
