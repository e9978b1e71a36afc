"""The norm and softmax rungs under NVIDIA Compute Sanitizer: every CUDA variant of
layer_norm, rms_norm, softmax and the fused add_layer_norm / add_rms_norm once per
case, small shapes, so a sanitized run takes seconds.

    compute-sanitizer --tool memcheck  python benchmarks/norm_sanitize.py
    compute-sanitizer --tool racecheck python benchmarks/norm_sanitize.py

Widths: 33 (no whole 16-byte pack: the fallbacks), 1000 (several rows a block),
4096, 30000 (past the register and shared-memory caches: the re-read paths) and
65536 (softmax's cluster rung on Hopper). bfloat16 input, a row-strided view of a
wider tensor for the last case of each width. The caching allocator is off
(PYTORCH_NO_CUDA_MEMORY_CACHING=1) so memcheck sees the end of every tensor.
Exit 0 when all ran, 2 without a GPU.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")

import torch  # noqa: E402

WIDTHS = (33, 1000, 4096, 30000, 65536)


def cases(n: int):
    """(label, x): a contiguous input and a row-strided view of a wider one."""
    yield "contiguous", torch.randn(5, n, device="cuda", dtype=torch.bfloat16)
    yield "row-strided", torch.randn(3, n + 8, device="cuda", dtype=torch.bfloat16)[:, :n]


def run(op: str, variant: str, x: torch.Tensor) -> None:
    import torch_memopt

    n = x.shape[-1]
    w = torch.randn(n, device="cuda", dtype=x.dtype)
    if op == "layer_norm":
        torch_memopt.layer_norm(x, [n], w, w, variant=variant)
    elif op == "rms_norm":
        torch_memopt.rms_norm(x, [n], w, variant=variant)
    elif op == "softmax":
        torch_memopt.softmax(x, -1, variant=variant)
    elif op == "add_layer_norm":
        torch_memopt.add_layer_norm(x, torch.randn_like(x), [n], w, w, variant=variant)
    else:
        torch_memopt.add_rms_norm(x, torch.randn_like(x), [n], w, variant=variant)
    torch.cuda.synchronize()


def main() -> int:
    if not torch.cuda.is_available():
        print("norm_sanitize.py needs a CUDA GPU")
        return 2
    import torch_memopt

    count = 0
    for op in ("layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm"):
        for variant in torch_memopt.variants(op, "cuda"):
            for n in WIDTHS:
                for label, x in cases(n):
                    run(op, variant, x)
                    count += 1
    print(f"{count} cases ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
