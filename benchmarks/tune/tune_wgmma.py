"""Check and time the wgmma rung's variants beside cuBLAS, on one Hopper GPU.

    python benchmarks/tune/tune_wgmma.py --library /tmp/wgmma_tune.so [--out tune.json]
        [--shapes MxNxK ... [--bias-gelu]]

The library is benchmarks/tune/wgmma_configs.cu built by
benchmarks/tune/build_wgmma_tune.sh (import torch first: it links torch's libc10). Every variant is first checked against float64 on fresh random
inputs (tile-aligned and tail shapes, both B layouts, bf16 and fp16, bias + gelu),
and run twice on the same inputs (a moving result is a race); a variant that fails
is never timed. Then 4096^3 and 8192^3 in both layouts, bf16, with
the harness's kernel timer (median, L2 flushed: torch_memopt.bench.timing), cuBLAS (torch.mm) in the same run.

``--shapes MxNxK ...``: those shapes instead, linear's layout (W [N, K]), bf16, with bias and
GELU where ``--bias-gelu``, and torch_memopt.linear (``auto``: the plan's tile) timed beside
the variants: the short-K encoder layers (K = 768), where a tile's fixed cost (fill,
epilogue, drain) is most of its time and the ping-pong kernel's overlap of one consumer's
epilogue with the other's main loop is worth the most.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from torch_memopt.bench import results
from torch_memopt.bench.environment import describe
from torch_memopt.bench.timing import kernel_ms

GELU = 2  # memopt::Activation::gelu
CHECK_SHAPES = [(128, 256, 64), (256, 512, 128), (130, 300, 200), (520, 1000, 1000),
                (2048, 2048, 2048)]


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.memopt_tune_name.restype = ctypes.c_char_p
    lib.memopt_tune_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p,
                                    ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int,
                                    ctypes.c_int, ctypes.c_void_p]
    return lib


def runner(lib, config: int):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def run(a, b, k_major, bias, act, out):
        M, K = a.shape
        N = b.shape[0] if k_major else b.shape[1]
        return lib.memopt_tune_run(config, a.data_ptr(), a.stride(0), b.data_ptr(), b.stride(0),
                                   int(k_major), bias.data_ptr() if bias is not None else None,
                                   out.data_ptr(), M, N, K, act,
                                   int(a.dtype == torch.bfloat16), stream)
    return run


def check(run) -> list[str]:
    """Failures of one variant over the check shapes; empty when it is right."""
    failures = []
    for dtype, tol in ((torch.bfloat16, 1e-2), (torch.float16, 5e-3)):
        for M, N, K in CHECK_SHAPES:
            for k_major in (True, False):
                a = torch.randn(M, K, device="cuda", dtype=dtype)
                b = torch.randn(N, K, device="cuda", dtype=dtype) if k_major else \
                    torch.randn(K, N, device="cuda", dtype=dtype)
                bias = torch.randn(N, device="cuda", dtype=dtype)
                out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
                rc = run(a, b, k_major, bias, GELU, out)
                if rc == -2:
                    continue  # TMA cannot read these rows: the op copies them first
                again = torch.empty_like(out)
                run(a, b, k_major, bias, GELU, again)
                torch.cuda.synchronize()
                ref = F.gelu(a.double() @ (b.double().t() if k_major else b.double()) + bias.double())
                err = ((out.double() - ref).norm() / ref.norm()).item()
                name = f"{str(dtype)[6:]} {M}x{N}x{K} {'W [N,K]' if k_major else 'b [K,N]'}"
                if rc != 0 or not err < tol:
                    failures.append(f"{name}: rc {rc}, relative error {err:.2e}")
                elif not torch.equal(out, again):
                    failures.append(f"{name}: two runs differ (a race)")
    return failures


def time_shapes(lib, names, correct, shapes, bias_gelu) -> list[dict]:
    """Each MxNxK in linear's layout: cuBLAS (F.linear), torch_memopt.linear (auto) and
    every correct variant, bf16, same inputs, the kernel timer."""
    import torch_memopt

    records = []
    for shape in shapes:
        M, N, K = (int(v) for v in shape.lower().split("x"))
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(N, device="cuda", dtype=torch.bfloat16) if bias_gelu else None
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        act = GELU if bias_gelu else 0
        times = {"cuBLAS": kernel_ms(lambda: F.gelu(F.linear(a, w, bias)) if bias_gelu
                                     else F.linear(a, w)),
                 "auto": kernel_ms(lambda: torch_memopt.linear(
                     a, w, bias, activation="gelu" if bias_gelu else "none"))}
        for i, name in enumerate(names):
            if correct[i]:
                run = runner(lib, i)
                times[name] = kernel_ms(lambda: run(a, w, True, bias, act, out))
        for name, ms in times.items():
            records.append({"shape": [M, N, K], "bias_gelu": bias_gelu, "variant": name,
                            "ms": ms, "vs_cublas": times["cuBLAS"] / ms})
        print(f"{M}x{N}x{K}: " + "  ".join(f"{n} {ms * 1e3:.1f} us" for n, ms in times.items()),
              flush=True)
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--out", default=None)
    parser.add_argument("--shapes", nargs="*", default=None, help="MxNxK, linear's layout")
    parser.add_argument("--bias-gelu", action="store_true", help="with --shapes: + bias, GELU")
    args = parser.parse_args(argv)
    lib = load(args.library)
    names = [lib.memopt_tune_name(i).decode() for i in range(lib.memopt_tune_count())]
    records = []
    correct = []
    for i, name in enumerate(names):
        failures = check(runner(lib, i))
        correct.append(not failures)
        print(f"{name}: {'correct' if not failures else 'WRONG'}", flush=True)
        for line in failures[:8]:
            print(f"  {line}", flush=True)
    if args.shapes:
        records += time_shapes(lib, names, correct, args.shapes, args.bias_gelu)
    for n in () if args.shapes else (4096, 8192):
        flop = 2 * n ** 3
        for k_major in (True, False):
            a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
            peer = (lambda: torch.mm(a, b.t())) if k_major else (lambda: torch.mm(a, b))
            cublas_ms = kernel_ms(peer)
            for i, name in enumerate(names):
                if not correct[i]:
                    continue
                run = runner(lib, i)
                ms = kernel_ms(lambda: run(a, b, k_major, None, 0, out))
                rec = {"size": n, "layout": "W [N,K]" if k_major else "b [K,N]", "variant": name,
                       "ms": ms, "tflops": flop / ms / 1e9, "cublas_ms": cublas_ms,
                       "vs_cublas": cublas_ms / ms}
                records.append(rec)
                print(f"{n}^3 {rec['layout']:8s} {name:24s} {rec['tflops']:6.0f} TFLOP/s  "
                      f"cuBLAS {flop / cublas_ms / 1e9:6.0f}  {rec['vs_cublas']:.3f}x", flush=True)
    if args.out:
        meta = describe(torch.device("cuda"))
        document = {"meta": meta, "correct": dict(zip(names, correct)), "records": records}
        results.write(Path(args.out), results.json_safe(document))
    return 0 if all(correct) else 1


if __name__ == "__main__":
    sys.exit(main())
