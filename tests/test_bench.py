"""``python -m torch_memopt.bench`` end to end on its CPU path: it runs, says so in its
first line, writes records of the one schema, ends with the summary line and refuses
bad choices with a message before timing anything. Tiny shapes and --rep-ms keep the
file to seconds on two cores; the GPU path runs on the H200 (scripts/gpu_check.sh).
"""
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torch_memopt.bench import main
from torch_memopt.bench.suites import SUITES

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--quick", "--device", "cpu", "--rep-ms", "1"]
RECORD_FIELDS = {"suite", "op", "dtype", "shape", "variant", "ours_us", "peers", "best_peer",
                 "ratio", "tflops", "gbps", "rel_err", "status"}


def check_records(document: dict, suite: str) -> list[dict]:
    """The schema every consumer of the results relies on, and its arithmetic."""
    assert document["suite"] == suite
    meta = document["meta"]
    assert meta["device"] == "cpu" and meta["gpu"] is None and meta["quick"] is True
    assert meta["torch"] == torch.__version__ and meta["date"]
    records = document["records"]
    assert records
    for r in records:
        assert RECORD_FIELDS <= r.keys(), r
        assert r["suite"] == suite
        if r["status"] != "ok":
            continue
        assert r["ours_us"] > 0 and r["peers"], r
        best_us = min(us for us in r["peers"].values() if us)
        assert r["peers"][r["best_peer"]] == best_us
        assert math.isclose(r["ratio"], best_us / r["ours_us"], rel_tol=1e-9)
        if r["flop"]:
            assert math.isclose(r["tflops"] * 1e12, r["flop"] / (r["ours_us"] * 1e-6), rel_tol=1e-9)
        if r["bytes"]:
            assert math.isclose(r["gbps"] * 1e9, r["bytes"] / (r["ours_us"] * 1e-6), rel_tol=1e-9)
        assert r["rel_err"] is not None and r["rel_err"] < 1e-2
    return records


def test_default_suite_on_the_cpu_writes_records_and_ends_with_the_summary(tmp_path, capsys):
    assert main([*FAST, "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    why = "--device cpu given" if torch.cuda.is_available() else "no CUDA GPU found"
    assert lines[0] == (f"python -m torch_memopt.bench: {why}: timing the CPU reference kernels "
                        f"on small shapes, not the GPU kernels (torch {torch.__version__}, commit "
                        f"{lines[0].rsplit('commit ', 1)[1]}")
    assert lines[-1].startswith("models: ours (auto speed) ÷ best peer, geomean (worst): linear ")
    records = check_records(json.loads((tmp_path / "models_cpu_quick.json").read_text()), "models")
    ops = {r["op"] for r in records}
    assert ops == {"linear", "layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm"}
    assert all(set(r["peers"]) == {"eager"} for r in records)  # no compile, no Liger on the CPU
    assert {r["label"] for r in records} >= {"gpt-2, bert-base qkv", "llama-3-8b vocab"}


def test_the_command_of_the_readme_runs_from_the_checkout_root(tmp_path):
    # The import that failed on a fresh machine: run from the root, the source folder
    # torch_memopt/ is what Python imports; the editable install builds _C into it.
    done = subprocess.run([sys.executable, "-m", "torch_memopt.bench", *FAST, "--op", "softmax",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0].startswith("python -m torch_memopt.bench: ")
    assert "timing the CPU reference kernels" in done.stdout.splitlines()[0]
    check_records(json.loads((tmp_path / "models_cpu_quick.json").read_text()), "models")


@pytest.mark.parametrize("suite", ["ops", "gemm-ladder", "tensor-core", "norms", "add-norm"])
def test_each_kernel_suite_runs_on_the_cpu(suite, tmp_path):
    assert main([suite, *FAST, "--out", str(tmp_path)]) == 0
    records = check_records(json.loads((tmp_path / f"{suite}_cpu_quick.json").read_text()), suite)
    assert all(r["status"] in ("ok", "skipped") for r in records)


def test_a_suite_that_cannot_run_here_says_why(capsys, tmp_path):
    assert main(["constant-memory", *FAST, "--out", str(tmp_path)]) == 0
    assert "== constant-memory: not run here: the case study's kernels need a CUDA GPU" in \
        capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_no_save_writes_nothing(tmp_path):
    assert main([*FAST, "--op", "rms_norm", "--out", str(tmp_path), "--no-save"]) == 0
    assert not list(tmp_path.iterdir())


def test_a_deadline_cuts_the_cases_left_and_still_saves(tmp_path, capsys):
    # Past --deadline-s no case starts: here at once, so every case is cut and the JSON
    # says how many, where `timeout` around the run would have lost the suite whole.
    assert main([*FAST, "--op", "rms_norm", "--out", str(tmp_path), "--deadline-s", "1e-9"]) == 0
    document = json.loads((tmp_path / "models_cpu_quick.json").read_text())
    cut = document["meta"]["cases_cut"]
    assert cut > 0 and document["records"] == []
    assert f"models: --deadline-s 1e-09 passed, {cut} of {cut} cases not run" in \
        capsys.readouterr().out


def test_list_names_every_suite(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for name, module in SUITES.items():
        assert f"{name:<16} {module.TITLE}" in out


@pytest.mark.parametrize("argv, message", [
    (["no_such_suite"], r"suite 'no_such_suite' does not exist; choose from models, ops"),
    (["--dtype", "float64"], r"--dtype 'float64' is not supported"),
    (["--peers", "numpy"], r"--peers 'numpy' is not a peer; choose from cublas, eager, compile, liger"),
    (["--variant", "no_such_rung"], r"--variant no_such_rung: suite models has no such variant "
                                    r"here; it has auto, reference"),
    (["--rep-ms", "0"], r"--rep-ms must be positive, got 0"),
    (["--pad-us", "600"], r"--pad-us must be in \[0, 500\], got 600"),
    (["--deadline-s", "0"], r"--deadline-s must be positive, got 0"),
    (["--device", "tpu"], r"--device 'tpu' is not a device; expected cpu, cuda or cuda:N"),
    (["--device", "meta"], r"--device 'meta': expected cpu, cuda or cuda:N, got a meta device"),
])
def test_bad_choices_exit_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*FAST, *argv])
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_shape_keeps_only_the_cases_of_those_sizes(tmp_path):
    assert main(["norm-grid", *FAST, "--op", "softmax", "--shape", "N=1000,7", "--shape", "rows=5",
                 "--out", str(tmp_path)]) == 0
    records = check_records(json.loads((tmp_path / "norm-grid_cpu_quick.json").read_text()), "norm-grid")
    assert {(r["shape"]["rows"], r["shape"]["N"]) for r in records} == {(5, 1000)}


@pytest.mark.parametrize("argv, message", [
    (["--shape", "N"], r"--shape 'N': expected KEY=V\[,V...\] with integer values"),
    (["--shape", "N=big"], r"--shape 'N=big': expected KEY=V"),
    (["--shape", "=4"], r"--shape '=4': expected KEY=V"),
    (["norm-grid", "--shape", "N=3"], r"--shape: suite norm-grid has no case of that shape"),
])
def test_bad_shapes_exit_2_before_timing(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*FAST, *argv])
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message without a GPU")
def test_asking_for_cuda_without_a_gpu_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["--device", "cuda"])
    assert "no CUDA GPU is available to this process" in capsys.readouterr().err


def test_e2e_plumbing_on_a_small_model(tmp_path):
    pytest.importorskip("transformers", reason="the e2e suite builds Hugging Face models")
    pytest.importorskip("timm", reason="the e2e suite builds a timm ViT")
    assert main(["e2e", *FAST, "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "e2e_cpu_quick.json").read_text())
    records = check_records(doc, "e2e")
    assert {(r["op"], r["extra"]["step"], r["variant"]) for r in records} == {
        ("llama", "prefill", "optimize_"), ("llama", "decode", "optimize_")}
    for r in records:
        assert r["rel_err"] < 1e-3  # 1 - cosine similarity against stock eager
