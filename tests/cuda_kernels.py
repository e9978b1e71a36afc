"""Which CUDA kernels a call launched, by name, from torch.profiler: for tests that a
shape takes the kernel it should (a rung's own, not its fallback's)."""

import torch


def kernels_run(fn) -> list[str]:
    """The names of the CUDA kernels `fn()` launched, one entry per distinct kernel."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.key for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
