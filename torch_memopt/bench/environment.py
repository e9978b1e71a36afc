"""The run's environment, recorded once at the top of every results JSON (``meta``):
what a reader needs to trust and reproduce a figure (GPU, driver, torch, CUDA, triton
and Liger versions, the commit, the date) and nothing that identifies the machine: no
hostname, no user, no paths. The benchmarks and the probe both take it from here."""
from __future__ import annotations

import datetime
import os
import platform
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import torch

import torch_memopt

# The checkout the package runs from (an editable install), where git can name the commit.
CHECKOUT = Path(torch_memopt.__file__).resolve().parents[1]


def _output(cmd: list[str]) -> str | None:
    """stdout of ``cmd`` run in the checkout, or None when it fails."""
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=CHECKOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def commit() -> str | None:
    """The short commit, marked when tracked files have uncommitted changes; None
    outside a git checkout. ``MEMOPT_GIT_COMMIT`` overrides it where the checkout's git
    is not the code's: the GPU machine gets a copy of the working tree whose .git is
    the session's starting commit (seen 2026-12-01: it read 2f22a0c+uncommitted for
    code committed as 5e43a66)."""
    if os.environ.get("MEMOPT_GIT_COMMIT"):
        return os.environ["MEMOPT_GIT_COMMIT"]
    head = _output(["git", "rev-parse", "--short", "HEAD"])
    if head and _output(["git", "status", "--porcelain", "--untracked-files=no"]):
        head += "+uncommitted"
    return head


def version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def gpu_slug(name: str | None) -> str:
    """The short GPU name of results files: ``NVIDIA H200`` -> ``h200``; ``cpu`` without one."""
    if not name:
        return "cpu"
    model = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", name)
    text = model.group(1) if model else name
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def describe(device: torch.device) -> dict:
    """The ``meta`` block of a results document, for ``device``."""
    device = torch.device(device)
    on_gpu = device.type == "cuda"
    props = torch.cuda.get_device_properties(device) if on_gpu else None
    driver = None
    if on_gpu and shutil.which("nvidia-smi"):
        driver = _output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return {
        "device": device.type,
        "gpu": props.name if props else None,
        "gpu_slug": gpu_slug(props.name if props else None),
        "capability": f"{props.major}.{props.minor}" if props else None,
        "sm_count": props.multi_processor_count if props else None,
        "l2_bytes": props.L2_cache_size if props else None,
        "driver": driver.splitlines()[0] if driver else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": version_of("triton"),
        "liger_kernel": version_of("liger-kernel"),
        "torch_memopt": torch_memopt.__version__,
        "built_with_cuda": torch_memopt.built_with_cuda(),
        "python": platform.python_version(),
        "git": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def opening_line(meta: dict) -> str:
    """The first line a run prints: which hardware is timed, with versions."""
    if meta["device"] == "cuda":
        return (f"{meta['gpu']} (compute capability {meta['capability']}, {meta['sm_count']} SMs, "
                f"{meta['l2_bytes'] / 2**20:.0f} MiB L2), torch {meta['torch']}, "
                f"CUDA {meta['cuda']}, commit {meta['git'] or 'unknown'}")
    why = "no CUDA GPU found" if not torch.cuda.is_available() else "--device cpu given"
    return (f"{why}: timing the CPU reference kernels on small shapes, not the GPU kernels "
            f"(torch {meta['torch']}, commit {meta['git'] or 'unknown'})")
