"""The run's environment, recorded at the top of every results JSON: GPU, versions,
driver, commit and date. Each benchmark script adds its own keys (timing, peers, argv)."""
from __future__ import annotations

import datetime
import platform
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def command_output(cmd: list[str]) -> str | None:
    """stdout of ``cmd`` run in the repository root, or None when it fails."""
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def environment(cuda: bool, seed: int) -> dict:
    """GPU (None fields without one), torch / CUDA / driver / triton / python versions,
    the commit (marked when the tree has uncommitted changes), the UTC date, the seed."""
    import torch

    import torch_memopt

    props = torch.cuda.get_device_properties(torch.cuda.current_device()) if cuda else None
    driver = command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]) \
        if cuda and shutil.which("nvidia-smi") else None
    commit = command_output(["git", "rev-parse", "--short", "HEAD"])
    if commit and command_output(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += "+uncommitted changes"
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    return {
        "gpu": props.name if props else None,
        "capability": f"{props.major}.{props.minor}" if props else None,
        "sm_count": props.multi_processor_count if props else None,
        "l2_bytes": props.L2_cache_size if props else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "driver": driver.splitlines()[0] if driver else None,
        "triton": triton_version,
        "torch_memopt": torch_memopt.__version__,
        "python": platform.python_version(),
        "git": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
    }
