"""A Llama-shaped decoder block and its tensor-parallel plan, for the tensor-parallel
tests (tests/test_tensor_parallel.py) and example (benchmarks/tp_llama.py, where
Hugging Face's transformers is missing): RMSNorm, q/k/v/o with grouped-query heads,
causal softmax attention written out, a SwiGLU MLP."""
from __future__ import annotations

import torch
from torch import nn


class LlamaShapedBlock(nn.Module):
    """A Llama-shaped decoder block (defaults: hidden 64, 8 query heads and 4 key/value heads of
    8, SwiGLU intermediate 96), RMSNorms; causal attention written out (matmul, softmax)."""

    def __init__(self, hidden=64, heads=8, kv_heads=4, intermediate=96):
        super().__init__()
        self.head_dim = hidden // heads
        self.group = heads // kv_heads
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def attention(self, x):
        b, s = x.shape[0], x.shape[1]
        # the heads a rank holds: all of them, or its colwise share
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = k.repeat_interleave(self.group, dim=1)
        v = v.repeat_interleave(self.group, dim=1)
        scores = q @ k.transpose(-1, -2) / self.head_dim ** 0.5
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.o_proj((probs @ v).transpose(1, 2).reshape(b, s, -1))

    def forward(self, x):
        h = x + self.attention(self.input_layernorm(x))
        n = self.post_attention_layernorm(h)
        return h + self.down_proj(torch.nn.functional.silu(self.gate_proj(n)) * self.up_proj(n))


def parallelize_block(block: LlamaShapedBlock, mesh, sequence_parallel: bool = True):
    """``parallelize_module`` with the Megatron plan: q/k/v and gate/up colwise, o and
    down rowwise; with ``sequence_parallel`` the norms run on sequence-sharded input
    (``SequenceParallel``) and the block takes and returns a DTensor sharded on dim 1,
    else plain replicated tensors in and out."""
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)

    if sequence_parallel:
        col = ColwiseParallel(input_layouts=Shard(1))
        row = RowwiseParallel(output_layouts=Shard(1), use_local_output=False)
        norms = {"input_layernorm": SequenceParallel(),
                 "post_attention_layernorm": SequenceParallel()}
    else:
        col, row, norms = ColwiseParallel(), RowwiseParallel(), {}
    return parallelize_module(block, mesh, {
        **norms, "q_proj": col, "k_proj": col, "v_proj": col, "o_proj": row,
        "gate_proj": col, "up_proj": col, "down_proj": row})
