"""Shared pytest fixtures: the devices a test runs on.

CUDA cases are always collected and skipped with a reason where they cannot
run, so a CI log shows what was left to the GPU runner (scripts/gpu_check.sh).
"""

import socket
import zlib

import pytest
import torch

import torch_memopt

NO_CUDA_REASON = (
    "no CUDA GPU on this machine: CUDA tests run on the H200 through scripts/gpu_check.sh"
    if torch_memopt.built_with_cuda()
    else "this build has no CUDA kernels (nvcc not found at build time, or MEMOPT_CPU_ONLY=1)"
)
HAS_CUDA = torch.cuda.is_available() and torch_memopt.built_with_cuda()

requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA_REASON)

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=[requires_cuda, pytest.mark.cuda]),
]

DTYPES = [
    pytest.param(torch.float32, id="float32"),
    pytest.param(torch.float16, id="float16"),
    pytest.param(torch.bfloat16, id="bfloat16"),
]


def free_port() -> int:
    """A TCP port free on this machine now, for a test's process group (torchrun, spawn)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=DTYPES)
def dtype(request):
    return request.param


@pytest.fixture(params=[2, 0], ids=["peeled", "narrow-packs"])
def norm_peel(request):
    """Norm rows off the 16-byte pack through each of their two kernels, forced: peeled
    (16-byte packs, single-element head and tail a row) wherever it fits, and the
    narrower packs that fit every row (auto's rule picks between them). True when the
    peel is forced. The switch is process-wide: restored after."""
    from torch_memopt.testing.switches import PEELED, norm_switches

    with norm_switches(peel=request.param):
        yield request.param == PEELED


@pytest.fixture(params=[1, 0, 2], ids=["params-early", "params-read-late", "params-prefetched"])
def norm_param_stage(request):
    """The vectorized norm kernel with its parameters fetched early where the launcher's
    rule allows it (the default: into registers with the row, staged in shared memory, or
    prefetched towards L2), read from global memory after the reductions, and prefetched
    towards L2 without staging (read late where the default holds them in registers).
    The switch is process-wide: restored after."""
    from torch_memopt.testing.switches import norm_switches

    with norm_switches(param_stage=request.param):
        yield request.param


@pytest.fixture(autouse=True)
def seed_per_test(request):
    """Different random inputs in every test, reproducible from the test's id."""
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


# The fuzzer's per-op counts (tests/test_fuzz.py appends them), printed at the end of
# the run so that a CI log shows how many cases ran and failed (under pytest-xdist the
# workers' lines stay with the workers; the GPU runner prints the CLI's instead).
FUZZ_LINES: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if FUZZ_LINES:
        terminalreporter.section("fuzz")
        for line in FUZZ_LINES:
            terminalreporter.write_line(line)
