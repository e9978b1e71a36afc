"""Every op and every CUDA variant under CUDA-graph capture and on two streams at once
(issue 18): a captured call replays the eager result bit for bit, also after its inputs
change in place, and two calls running together on two streams give what each gives
alone. The inputs are fuzzer cases (torch_memopt.testing.cases), a few a variant, in
whatever dtype the variant takes. CUDA only."""

import pytest
import torch

import torch_memopt
from conftest import requires_cuda
from torch_memopt.testing import cases, fuzz

pytestmark = [requires_cuda, pytest.mark.cuda]

SEED = 18
PER_VARIANT = 3  # cases a variant (the first indices it accepts)


def _accepted_cases(op, variant, count=PER_VARIANT, tries=60):
    """The first `count` fuzzer cases of op pinned to `variant` that it accepts (a
    fp32-only rung refuses 16-bit cases with a TypeError; those are skipped), with
    no empty input."""
    out = []
    for index in range(tries):
        case = cases.make_case(op, SEED, index, "cuda", [variant])
        if any(t.numel() == 0 for t in _tensors(case)):
            continue  # nothing to launch: an empty graph
        try:
            run(case)
        except TypeError:
            continue
        out.append(case)
        if len(out) == count:
            break
    return out


def run(case):
    result = getattr(torch_memopt, case.op)(*case.args, **case.kwargs)
    return result if isinstance(result, tuple) else (result,)


def _tensors(case):
    return [a for a in case.args if isinstance(a, torch.Tensor)]


def _scale_inputs_in_place(case, factor):
    """Changes every input's values in place through the storage it views (an expanded
    or transposed view cannot be written element-wise)."""
    for t in _tensors(case):
        (t._base if t._base is not None else t).mul_(factor)


def _every_op_and_variant():
    if not torch.cuda.is_available():
        return []
    return [(op, v) for op in torch_memopt.ops.OPS for v in torch_memopt.variants(op, "cuda")]


@pytest.mark.parametrize("op, variant", _every_op_and_variant())
def test_graph_capture_replays_eager_bit_for_bit(op, variant):
    accepted = _accepted_cases(op, variant)
    assert accepted, f"{op} {variant}: no fuzzer case it takes"
    for case in accepted:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture stream, as capture needs
            run(case)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = run(case)
        for factor in (1.0, 0.5, -2.0):
            _scale_inputs_in_place(case, factor)
            graph.replay()
            eager = run(case)
            torch.cuda.synchronize()
            for got, want in zip(captured, eager):
                assert fuzz.same_values(got, want), f"{case.description}: replay x{factor} differs"


@pytest.mark.parametrize("op, variant", _every_op_and_variant())
def test_two_streams_at_once_match_each_alone(op, variant):
    accepted = _accepted_cases(op, variant, count=2)
    if len(accepted) < 2:
        pytest.skip(f"{op} {variant}: fewer than two fuzzer cases it takes")
    first, second = accepted
    alone = [run(first), run(second)]
    torch.cuda.synchronize()
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    together = [None, None]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for i, (case, stream) in enumerate(zip((first, second), streams)):
        with torch.cuda.stream(stream):
            torch.cuda._sleep(1_000_000)  # both queued before either runs
            together[i] = run(case)
    torch.cuda.synchronize()
    for i in range(2):
        for got, want in zip(together[i], alone[i]):
            assert fuzz.same_values(got, want), f"{(first, second)[i].description}: differs"
