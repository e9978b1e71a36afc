"""A tensor-parallel MLP on memopt's linear, checked against the single-device MLP (issue 6).

    torchrun --nproc_per_node=2 benchmarks/tp_mlp.py                # 2 GPUs, NCCL
    torchrun --nproc_per_node=2 benchmarks/tp_mlp.py --device cpu   # gloo, CPU kernels

The MLP is y = W2 · gelu(W1 · x + b1) + b2 (hidden 4× the model width). Megatron-style
sharding: each rank holds a slice of W1's rows and b1 (column parallel) and the matching
slice of W2's columns (row parallel), runs ``torch_memopt.linear`` twice (the first with
the GELU fused into its epilogue), and an ``all_reduce`` sums the partial outputs before
b2 is added. Every rank builds the full weights from the same seed and checks its output
against the unsharded MLP run by ``torch_memopt.linear`` on one device and by the stock
``F.linear``; rank 0 prints the errors and the times. Exit 1 when an output differs.
NVLink multicast (NVLS) is left off, as the H200 machines' notes ask.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_memopt.bench.timing import median_ms


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=20)
    return parser.parse_args(argv)


def full_weights(width: int, device, dtype):
    generator = torch.Generator().manual_seed(0)
    hidden = 4 * width

    def rand(*shape):
        return (torch.randn(*shape, generator=generator) / shape[-1] ** 0.5).to(device, dtype)

    return rand(hidden, width), rand(hidden), rand(width, hidden), rand(width)


def mlp(x, w1, b1, w2, b2):
    """The unsharded MLP on one device, on memopt's linear (GELU fused into the first)."""
    import torch_memopt

    return torch_memopt.linear(torch_memopt.linear(x, w1, b1, activation="gelu"), w2, b2)


def tp_mlp(x, w1, b1, w2, b2, rank: int, world: int):
    """This rank's share of the MLP, summed over ranks by all_reduce."""
    import torch_memopt

    rows = w1.shape[0] // world
    w1_shard, b1_shard = w1[rank * rows:(rank + 1) * rows], b1[rank * rows:(rank + 1) * rows]
    w2_shard = w2[:, rank * rows:(rank + 1) * rows]  # a column slice: read as it lies
    h = torch_memopt.linear(x, w1_shard, b1_shard, activation="gelu")
    y = torch_memopt.linear(h, w2_shard)
    dist.all_reduce(y)
    return y + b2


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    if args.device == "cuda":
        if torch.cuda.device_count() < world:
            print(f"tp_mlp.py needs {world} GPUs, found {torch.cuda.device_count()}")
            return 2
        torch.cuda.set_device(rank)
        device, dtype, backend = torch.device("cuda", rank), torch.bfloat16, "nccl"
    else:
        device, dtype, backend = torch.device("cpu"), torch.float32, "gloo"
    dist.init_process_group(backend)
    import torch_memopt

    try:
        with torch.inference_mode(), torch_memopt.use_cpu_kernels(args.device == "cpu"):
            w1, b1, w2, b2 = full_weights(args.width, device, dtype)
            x = torch.randn(args.tokens, args.width, generator=torch.Generator().manual_seed(1))
            x = x.to(device, dtype)
            y_tp = tp_mlp(x, w1, b1, w2, b2, rank, world)
            y_one = mlp(x, w1, b1, w2, b2)
            y_stock = F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
            scale = y_stock.float().norm()
            err_one = ((y_tp.float() - y_one.float()).norm() / scale).item()
            err_stock = ((y_tp.float() - y_stock.float()).norm() / scale).item()
            tolerance = 1e-5 if dtype == torch.float32 else 2e-2
            ok = err_one < tolerance and err_stock < tolerance
            tp_ms = median_ms(lambda: tp_mlp(x, w1, b1, w2, b2, rank, world), args.reps, args.device)
            one_ms = median_ms(lambda: mlp(x, w1, b1, w2, b2), args.reps, args.device)
        all_ok = torch.tensor([int(ok)], device=device)
        dist.all_reduce(all_ok, op=dist.ReduceOp.MIN)
        if rank == 0:
            print(f"tp_mlp: {world} ranks, {args.device} {str(dtype)[6:]}, x {args.tokens}×{args.width}, "
                  f"hidden {4 * args.width}")
            print(f"  relative error against one-device memopt {err_one:.2e}, "
                  f"against stock F.linear {err_stock:.2e} (tolerance {tolerance:g})")
            print(f"  {world}-rank time {tp_ms:.3f} ms, one device {one_ms:.3f} ms "
                  f"({one_ms / tp_ms:.2f}×)")
            print("  outputs match" if all_ok.item() else "  OUTPUTS DIFFER")
        # Both ranks reach the teardown together (tp_llama.py says why).
        dist.barrier()
        return 0 if all_ok.item() else 1
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
