"""Which CUDA kernels a call launched, by name, from torch.profiler: for tests that a
shape takes the kernel it should (a rung's own, not its fallback's)."""

import re

import torch


def kernels_run(fn) -> list[str]:
    """The names of the CUDA kernels `fn()` launched, one entry per distinct kernel."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.key for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]


def the_kernel(fn, pattern: re.Pattern, what: str) -> re.Match:
    """`pattern` matched against the one CUDA kernel `fn()` launched; fails naming `what`
    was expected and the kernels that ran instead. The match's `.string` is the name."""
    names = kernels_run(fn)
    found = pattern.search(names[0]) if len(names) == 1 else None
    assert found, f"expected {what} alone, ran {names}"
    return found
