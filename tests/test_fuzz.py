"""The seeded differential fuzzer (torch_memopt.testing.fuzz, issue 18): 200 cases an op
on the CPU kernels in CI, 100 an op on CUDA here (the GPU runner runs 1,000 through the
CLI); that it fails on a wrong kernel and prints a reproduction; that a case is the same
every time; that its layouts are the strides they claim."""

import pytest
import torch

import torch_memopt
import conftest
from conftest import requires_cuda
from torch_memopt.testing import cases, fuzz, layouts


def test_200_cases_an_op_on_the_cpu_kernels_match_float64():
    report = fuzz.run_fuzz(cases_per_op=200, seed=0, device="cpu", log=lambda line: None)
    conftest.FUZZ_LINES.extend(report.lines())
    assert report.counts == {op: 200 for op in torch_memopt.ops.OPS}
    assert not report.failures, "\n".join(report.failures)


@requires_cuda
@pytest.mark.cuda
def test_100_cases_an_op_on_cuda_match_float64():
    report = fuzz.run_fuzz(cases_per_op=100, seed=0, device="cuda", log=lambda line: None)
    conftest.FUZZ_LINES.extend(report.lines())
    assert not report.failures, "\n".join(report.failures)


def test_a_wrong_kernel_fails_with_a_reproduction(monkeypatch):
    real = torch_memopt.rms_norm
    monkeypatch.setattr(torch_memopt, "rms_norm", lambda *a, **k: real(*a, **k) * 1.05)
    report = fuzz.run_fuzz(cases_per_op=20, seed=3, device="cpu", ops=["rms_norm"],
                           log=lambda line: None)
    assert len(report.failures) >= 15  # all but empty inputs and poisoned all-NaN rows
    assert "--op rms_norm --seed 3 --case" in report.failures[0]
    assert "relative error" in report.failures[0]


def test_a_case_is_the_same_every_time():
    for op in torch_memopt.ops.OPS:
        variants = torch_memopt.variants(op, "cpu")
        one, two = (cases.make_case(op, 7, 11, "cpu", variants) for _ in range(2))
        assert one.description == two.description
        for a, b in zip(one.args, two.args):
            if isinstance(a, torch.Tensor):
                assert a.stride() == b.stride() and fuzz.same_values(a, b)


def test_layouts_have_the_strides_they_claim():
    gen = torch.Generator().manual_seed(0)
    make = lambda layout: layouts.make([6, 10], torch.float32, "cpu", layout, gen)
    assert make("contiguous").is_contiguous()
    assert make("transposed").stride() == (1, 6)
    assert make("stepped").stride() == (20, 2)
    assert make("offset").storage_offset() == 1 and make("offset").stride() == (13, 1)
    assert make("expanded").stride() == (0, 1)
    assert make("row_padded").stride() == (15, 1)
    assert (make("contiguous") != 0).all()


def test_the_cli_runs_one_case_by_its_index(capsys):
    assert fuzz.main(["--device", "cpu", "--op", "softmax", "--seed", "2", "--case", "5"]) == 0
    out = capsys.readouterr().out
    assert "fuzz cpu softmax: 1 cases, 0 failed" in out
