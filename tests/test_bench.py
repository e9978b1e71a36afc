"""``python -m torch_memopt.bench`` on its CPU path: runs, says so, writes sound JSON,
refuses bad choices with a message. Needs no GPU; tiny shapes and run times keep the
whole file to seconds on two cores.
"""
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch_memopt
from torch_memopt.bench import main
from torch_memopt.bench.harness import input_set_count
from torch_memopt.bench.progress import ProgressBar
from torch_memopt.bench.shapes import work

REPO_ROOT = Path(__file__).resolve().parents[1]
META_FIELDS = {"gpu", "device", "torch", "cuda", "capability", "date", "quick", "l2_bytes"}
RESULT_FIELDS = {
    "op", "dtype", "shape", "variant", "ours_ms", "stock_ms",
    "ours_rate", "stock_rate", "rate_unit", "speedup_vs_stock",
}
FAST = ["--quick", "--device", "cpu", "--min-run-time", "0.01"]


def check_document(document, *, ops, dtypes):
    """The JSON schema every consumer of bench results relies on."""
    assert META_FIELDS <= document["meta"].keys()
    assert document["meta"]["device"] == "cpu"
    assert document["meta"]["gpu"] is None
    assert document["meta"]["quick"] is True
    assert document["meta"]["torch"] == torch.__version__
    results = document["results"]
    assert {r["op"] for r in results} == set(ops)
    assert {r["dtype"] for r in results} == set(dtypes)
    for r in results:
        assert RESULT_FIELDS <= r.keys()
        for field in ("ours_ms", "stock_ms", "ours_rate", "stock_rate", "speedup_vs_stock"):
            assert math.isfinite(r[field]) and r[field] > 0, (field, r)
        assert math.isclose(r["speedup_vs_stock"], r["stock_ms"] / r["ours_ms"], rel_tol=1e-9)
        assert r["rate_unit"] == ("TFLOP/s" if r["op"] in ("gemm", "linear") else "GB/s")
    return results


def test_cpu_quick_in_process_every_variant(tmp_path, capsys):
    out = tmp_path / "results" / "bench.json"  # a missing parent folder is created
    argv = [*FAST, "--op", "gemm", "--op", "softmax", "--dtype", "float32,bf16"]
    assert main([*argv, "--variant", "all", "--out", str(out)]) == 0

    stdout = capsys.readouterr().out
    assert "CPU" in stdout.splitlines()[0]
    assert "speedup_vs_stock" in stdout
    results = check_document(json.loads(out.read_text()), ops=["gemm", "softmax"],
                             dtypes=["float32", "bfloat16"])
    for op in ("gemm", "softmax"):
        timed = {r["variant"] for r in results if r["op"] == op}
        assert timed == set(torch_memopt.variants(op, "cpu"))


def test_cpu_quick_subprocess_writes_json(tmp_path):
    out = tmp_path / "softmax.json"
    command = [sys.executable, "-m", "torch_memopt.bench", "--quick", "--device", "cpu",
               "--op", "softmax", "--out", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first_line = done.stdout.splitlines()[0]
    assert first_line.startswith("torch_memopt.bench:") and "CPU" in first_line
    results = check_document(json.loads(out.read_text()), ops=["softmax"],
                             dtypes=["float32", "float16", "bfloat16"])
    assert {r["variant"] for r in results} == {"auto"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--op", "softmax", "--variant", "no_such_rung"],
         r"--variant 'no_such_rung' is not a softmax variant on cpu"),
        (["--op", "conv2d"], r"--op 'conv2d' is not a benchmarked op"),
        (["--dtype", "float64"], r"--dtype 'float64' is not supported"),
        (["--min-run-time", "0"], r"--min-run-time must be positive"),
    ],
)
def test_bad_choices_exit_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*FAST, *argv])
    assert exit_info.value.code == 2
    stderr = capsys.readouterr().err
    assert re.search(message, stderr), stderr


def test_work_formulas():
    assert work("gemm", dict(M=2, N=3, K=5), torch.float32) == (60.0, "TFLOP/s")
    # layer_norm moves input + output (rows*N each) + weight + bias (N each).
    assert work("layer_norm", dict(rows=4, N=8), torch.float16) == ((2 * 32 + 2 * 8) * 2, "GB/s")
    assert work("rms_norm", dict(rows=4, N=8), torch.float32) == ((2 * 32 + 8) * 4, "GB/s")
    assert work("softmax", dict(rows=4, N=8), torch.bfloat16) == (2 * 32 * 2, "GB/s")


def test_l2_rotation_covers_twice_the_l2():
    l2 = 60 * 2**20
    assert input_set_count(8 * 2**20, l2) == 15  # 15 x 8 MiB >= 2 x 60 MiB
    assert input_set_count(512 * 2**20, l2) == 2  # never the same inputs twice in a row
    assert input_set_count(1024, l2) == 16  # capped
    assert input_set_count(8 * 2**20, 0) == 1  # CPU: no rotation


def test_progress_bar_draws_only_when_enabled():
    stream = io.StringIO()
    bar = ProgressBar(total=2, stream=stream, enabled=True)
    bar.step("gemm float32 128x128x128 torch.mm")
    bar.step("gemm float32 128x128x128 memopt auto")
    bar.close()
    drawn = stream.getvalue()
    assert "0/2" in drawn and "1/2" in drawn and "2/2" in drawn and drawn.endswith("\n")

    silent = io.StringIO()
    quiet_bar = ProgressBar(total=1, stream=silent, enabled=False)
    quiet_bar.step("x")
    quiet_bar.close()
    assert silent.getvalue() == ""
