"""python -m torch_memopt.probe: the parts that run without a GPU: the help,
the exit and message without a GPU, the claims' verdicts, the table and the JSON
record. The probes themselves run on the H200 (tests/test_probes_gpu.py)."""

import subprocess
import sys

import pytest
import torch

from torch_memopt.probe import claims
from torch_memopt.probe.__main__ import main, table
from torch_memopt.bench.results import json_safe


def test_help_runs():
    result = subprocess.run([sys.executable, "-m", "torch_memopt.probe", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "--plot-dir" in result.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message without a GPU")
def test_without_a_gpu_it_says_the_probe_needs_one(capsys, tmp_path):
    out = tmp_path / "probe.json"
    assert main(["--quick", "--out", str(out)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().out
    assert not out.exists()


def test_unknown_probe_names_the_valid_ones(capsys):
    with pytest.raises(SystemExit):
        main(["--only", "latency,nonsense"])
    assert "unknown probes ['nonsense']" in capsys.readouterr().err


@pytest.mark.parametrize("value, low, high, verdict", [
    (200, 200, 200, "holds"), (250, 200, 200, "holds"), (160, 200, 200, "holds"),
    (600, 200, 200, "off by 3.0× (higher)"), (50, 200, 200, "off by 4.0× (lower)"),
    (500, 400, 800, "holds"),
])
def test_in_range_verdicts(value, low, high, verdict):
    assert claims.in_range(value, low, high) == verdict


def test_at_least_and_does_not_apply():
    assert claims.at_least(3.2, 3.2) == "holds"
    assert claims.at_least(1.0, 3.2) == "off by 3.2× (lower)"
    assert claims.does_not_apply("no managed memory").startswith("does not apply on this GPU")


@pytest.mark.parametrize("value, floor, holds", [
    (1.8, 2.0, True), (1.7, 2.0, False),    # the slack shrinks the gain: 2× holds from 1.8×
    (1.04, 1.05, True), (0.99, 1.05, False),  # a claimed gain never holds at a loss
    (0.84, 1.05, False),                     # held with floor / SLACK, before 2026-11-30
])
def test_a_claimed_gain_is_not_met_by_a_loss(value, floor, holds):
    assert (claims.at_least(value, floor) == "holds") is holds


@pytest.mark.parametrize("ratio, verdict", [
    (0.7, "holds"), (0.92, "holds"), (0.5, "holds"),
    (0.96, "off: it costs 4%, not 10%-50%"), (1.02, "off: it costs 0%, not 10%-50%"),
    (0.2, "off by 2.5× (lower)"),
])
def test_a_claimed_cost_is_not_met_without_one(ratio, verdict):
    assert claims.costs_at_least(ratio, 0.5, 0.9) == verdict


def test_table_has_a_row_per_claim():
    rows = [claims.Row("1 latency", "L2 ~200 cycles", "273 cycles", "off by 1.4× (higher)", 273, "cycles"),
            claims.Row("2 shared memory", "x", "y", "holds")]
    text = table(rows).splitlines()
    assert text[0].split() == ["probe", "claim", "measured", "verdict"]
    assert len(text) == 3 and text[1].endswith("off by 1.4× (higher)")


def test_json_has_no_nan():
    assert json_safe({"a": [float("nan"), 1.0, float("inf")]}) == {"a": [None, 1.0, None]}
