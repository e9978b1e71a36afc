"""The wgmma epilogue's exact GELU against gelu_tanh and cuBLAS + F.gelu, at BERT-base's MLP
up-projection (M x 3072 x 768, bf16, bias): the check behind common/activation.h's erfc.

    python benchmarks/tune/gelu_epilogue_check.py

Times (µs): the harness's kernel timer (median, L2 flushed), one line per M.
"""
import torch
import torch.nn.functional as F

import torch_memopt
from torch_memopt.bench.timing import kernel_ms

for M in (2048, 8192):
    x = torch.randn(M, 768, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(3072, 768, device="cuda", dtype=torch.bfloat16) * 768 ** -0.5
    b = torch.randn(3072, device="cuda", dtype=torch.bfloat16)
    row = {a: kernel_ms(lambda: torch_memopt.linear(x, w, b, activation=a)) * 1e3
           for a in ("gelu", "gelu_tanh")}
    row["cublas+gelu"] = kernel_ms(lambda: F.gelu(F.linear(x, w, b))) * 1e3
    print(M, {k: round(v, 1) for k, v in row.items()}, flush=True)
