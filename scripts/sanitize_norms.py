"""The norm and softmax rungs under NVIDIA Compute Sanitizer: every CUDA variant of
layer_norm, rms_norm, softmax and the fused add_layer_norm / add_rms_norm once per
case, small shapes, so a sanitized run takes seconds.

    compute-sanitizer --tool memcheck  python scripts/sanitize_norms.py
    compute-sanitizer --tool racecheck python scripts/sanitize_norms.py
    compute-sanitizer --tool racecheck python scripts/sanitize_norms.py softmax   # some ops

Widths: 33 (no whole 16-byte pack: the fallbacks), 197 and 500 (softmax
warp_per_row's 8- and 16-element caches), 1000 (several rows a block), 4096,
12288 (8 fp32 packs a thread), 30000 (past the shared-memory caches; fp32 past
the registers: the re-read paths), 65536 (the cluster rungs with 512-thread CTAs)
and 200000 (softmax's cluster rung with 1024-thread CTAs; past the norm cluster's
registers); 2049, 2050 and 4100 off the 16-byte pack (the peeled rows: every head
length in turn at 2049; 4100 in fp32 is 1025 packs, a few past 256 threads' share).
bfloat16 input at every width, float32 at the widths whose paths differ for it (8-pack
threads, the re-read paths, the clusters); a contiguous input and a row-strided view of a
wider tensor at each. The norms run first with their parameters read late
(`_C._set_norm_param_stage(0)`), then by default (early: small grids take the kernels that
load their parameters into registers with the row, up to 256 threads a row, or past that
stage them in shared memory by cp.async, racecheck seeing the copies' barrier, or prefetch
them towards L2) at the widths the early fetch reaches. The caching allocator is off
(PYTORCH_NO_CUDA_MEMORY_CACHING=1) so memcheck sees the end of every tensor. Last,
softmax's one-pack-a-thread rows forced for fp32 (1000, 2047; 16-bit rows take them by
the rule), its staged rung over more rows than it has blocks (its row loop, both
buffers), and 16-bit rows of 70000 / 200000 columns held over clusters of 4 / 8 CTAs.
Exit 0 when all ran, 2 without a GPU.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")

import torch  # noqa: E402

WIDTHS = {
    torch.bfloat16: (33, 197, 500, 1000, 2049, 2050, 4096, 4100, 12288, 30000, 65536, 200000),
    torch.float32: (2050, 4100, 12288, 30000, 65536, 200000),
}
# Widths the early fetch reaches: into registers up to 256 threads a row (bf16 to 8192, fp32 to
# 4096: 16-byte packs, narrow ones, the peeled rows at every head length at 2049), and at 512
# threads in unpeeled rows of parameters as wide as the row's elements (bf16 12288, fp32
# 8192); past it staged within 32 KB of parameters a block where the part staged is whole
# 16-byte chunks, prefetched towards L2 where a block's parameters pass 32 KB (fp32 12288:
# the 1024-thread instances). The early pass runs these only, so racecheck stays within its
# cut.
OPS = ("layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm")
STAGED_WIDTHS = {torch.bfloat16: (33, 1000, 2049, 2050, 4096, 4100, 12288),
                 torch.float32: (2050, 4100, 8192, 12288)}


def cases(n: int, dtype: torch.dtype):
    """(label, x): a contiguous input and a row-strided view of a wider one."""
    yield "contiguous", torch.randn(5, n, device="cuda", dtype=dtype)
    yield "row-strided", torch.randn(3, n + 8, device="cuda", dtype=dtype)[:, :n]


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
        print("sanitize_norms.py needs a CUDA GPU")
        return 2
    import torch_memopt

    from torch_memopt.testing.switches import EARLY, LATE, norm_switches

    ops = sys.argv[1:] or list(OPS)
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        print(f"unknown ops {unknown}; ops: {', '.join(OPS)}")
        return 1
    count = 0
    for op in ops:
        # softmax has no parameters: once
        for stage in (LATE,) if op == "softmax" else (LATE, EARLY):
            with norm_switches(param_stage=stage):
                for variant in torch_memopt.variants(op, "cuda"):
                    for dtype, widths in (STAGED_WIDTHS if stage == EARLY else WIDTHS).items():
                        for n in widths:
                            for label, x in cases(n, dtype):
                                run(op, variant, x)
                                count += 1
    # softmax's staged rung loops over rows, two buffers in turn: more rows than its
    # blocks (one or two an SM), contiguous and a slice off the 16-byte chunks, and 20
    # rows a block; then the same over clusters of 2 CTAs (the pairs through
    # distributed shared memory, two slots by row parity).
    if "softmax" in ops and "staged" in torch_memopt.variants("softmax", "cuda"):
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        rows = 2 * sms + 3
        for cluster in (1, 2):
            previous = torch_memopt._C._set_softmax_staged_cluster(cluster)
            for x in (torch.randn(rows, 2049, device="cuda", dtype=torch.bfloat16),
                      torch.randn(rows, 3011, device="cuda")[:, 1:3008],
                      torch.randn(20 * 2 * sms + 3, 1031, device="cuda")):
                run("softmax", "staged", x)
                count += 1
            torch_memopt._C._set_softmax_staged_cluster(previous)
    # softmax's one-pack-a-thread launch (launch_online_few_rows; the rule takes it for
    # 16-bit grids of up to 512 rows, which the widths above reach) forced for fp32, which
    # the rule leaves off: 250 packs aligned, 512 packs peeled (the most it takes).
    if "softmax" in ops:
        from torch_memopt.testing.switches import softmax_switches

        with softmax_switches(few_rows=1 << 40):
            for n in (1000, 2047):
                for label, x in cases(n, torch.float32):
                    run("softmax", "auto", x)
                    count += 1
    # 16-bit rows past 65536 columns held over a cluster (auto, where its CTAs fill every
    # SM: launch_cluster_held): 70000 over 4 CTAs of 512 threads, 200000 over 8, with
    # half as many rows as SMs and one more (the last cluster alone in its wave),
    # contiguous and a row-strided view.
    if "softmax" in ops:
        rows = torch.cuda.get_device_properties(0).multi_processor_count // 2 + 1
        for n in (70000, 200000):
            for x in (torch.randn(rows, n, device="cuda", dtype=torch.bfloat16),
                      torch.randn(rows, n + 8, device="cuda", dtype=torch.float16)[:, :n]):
                run("softmax", "auto", x)
                count += 1
    print(f"{count} cases ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
