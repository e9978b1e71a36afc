"""Where wgmma_streamk's time goes: the kernel's own duration (torch.profiler's CUDA
kernel times) against the CUDA-event time of the whole call (the sweep's timer), beside
the plain wgmma kernel at the same tile, at shapes where the sweep found stream-K slow.

    python benchmarks/tune/probe_streamk.py

bfloat16, linear layout. A gap between the two times is host work or a launch the GPU
waits for (the workspace's allocation and memset); a slow kernel is the mainloop or
the fix-up.
"""

from __future__ import annotations

import sys

import torch
from torch.profiler import ProfilerActivity, profile

import torch_memopt
from torch_memopt import _C
from torch_memopt.bench.timing import kernel_ms

SHAPES = ((128, 4096, 4096), (256, 12288, 4096), (1024, 4096, 4096), (1024, 6144, 4096))
CONFIGS = (("wgmma", (128, 256)), ("wgmma_streamk", (128, 256)), ("wgmma_streamk", (128, 128)))


def kernel_us(call, reps: int = 20) -> dict[str, float]:
    """Mean CUDA time a call of each kernel name that ``call`` launches, in µs."""
    call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            call()
        torch.cuda.synchronize()
    out = {}
    for event in prof.key_averages():
        if event.device_type == torch.autograd.DeviceType.CUDA and event.count:
            out[event.key[:60]] = event.device_time_total / reps
    return out


def main() -> int:
    for M, N, K in SHAPES:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
        for variant, tile in CONFIGS:
            def call():
                _C._set_wgmma_tile(*tile)
                return torch_memopt.linear(x, w, variant=variant)
            event = kernel_ms(call) * 1e3
            kernels = kernel_us(call)
            listed = ", ".join(f"{k} {v:.1f}" for k, v in kernels.items())
            print(f"M={M} N={N} K={K} {variant} {tile[0]}x{tile[1]}: events {event:.1f} us; "
                  f"kernels: {listed}", flush=True)
    _C._set_wgmma_tile(0, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
