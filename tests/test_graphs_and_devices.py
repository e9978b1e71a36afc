"""An optimized model under CUDA-graph capture (torch.cuda.CUDAGraph, and torch.compile
mode="reduce-overhead") gives the outputs of eager; every op runs on its tensors' device
and current stream (cuda:1 when a second GPU is present). CUDA only: these run on the
H200 through scripts/gpu_check.sh.
"""
import copy

import pytest
import torch
from torch import nn

import torch_memopt
from conftest import requires_cuda
from memopt_calls import count_memopt_calls

pytestmark = [requires_cuda, pytest.mark.cuda]


def mlp_block(device, dtype=torch.bfloat16):
    torch.manual_seed(0)
    return nn.Sequential(nn.LayerNorm(256), nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256),
                         nn.RMSNorm(256), nn.Softmax(dim=-1)).to(device, dtype).eval()


def test_cuda_graph_capture_replays_the_eager_outputs():
    model = torch_memopt.optimize_(mlp_block("cuda"))
    static_x = torch.randn(8, 64, 256, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm up on a side stream, as capture requires
            for _ in range(2):
                model(static_x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), count_memopt_calls() as calls:
            static_out = model(static_x)
        assert sum(calls.values()) == 5, dict(calls)  # memopt ops were captured
        for _ in range(3):
            x = torch.randn_like(static_x)
            static_x.copy_(x)
            graph.replay()
            torch.testing.assert_close(static_out, model(x), rtol=0, atol=0)


def test_compile_reduce_overhead_matches_eager():
    model = torch_memopt.optimize_(mlp_block("cuda"))
    stock = copy.deepcopy(model)
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    with torch.inference_mode():
        for _ in range(3):  # the CUDA graph is recorded on a later call
            x = torch.randn(8, 64, 256, device="cuda", dtype=torch.bfloat16)
            torch.testing.assert_close(compiled(x).clone(), stock(x), rtol=2e-2, atol=2e-2)


def test_ops_follow_the_current_stream():
    model = torch_memopt.optimize_(mlp_block("cuda"))
    x = torch.randn(8, 64, 256, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        ref = model(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)  # ~tens of ms on this stream before the model
            out = model(x)
        side.synchronize()
    torch.testing.assert_close(out, ref, rtol=0, atol=0)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs a second GPU (cuda:1)")
def test_ops_run_on_the_tensors_device():
    model = torch_memopt.optimize_(mlp_block("cuda:1"))
    x = torch.randn(8, 64, 256, device="cuda:1", dtype=torch.bfloat16)
    with torch.inference_mode(), count_memopt_calls() as calls:
        assert torch.cuda.current_device() == 0
        out = model(x)
    assert out.device == torch.device("cuda:1") and sum(calls.values()) == 5
    stock = mlp_block("cuda:1")
    with torch.inference_mode():
        torch.testing.assert_close(out, stock(x), rtol=2e-2, atol=2e-2)
