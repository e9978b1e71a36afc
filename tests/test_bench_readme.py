"""README.md's headline and docs/results.md are what ``python -m torch_memopt.bench.readme``
makes of the committed JSON (no hand-typed figures), and ``--check`` fails on a results
file newer than its tables. CPU only: it reads JSON, nothing is timed."""
import json
import shutil

import pytest

from torch_memopt.bench import readme, results


def test_the_committed_tables_are_generated_from_the_committed_json():
    assert readme.main(["--check"]) == 0


def _models_doc(quick=False) -> dict:
    def record(op, tokens, ratio, label):
        return {"suite": "models", "op": op, "dtype": "bfloat16", "shape": {"M": tokens, "N": 8, "K": 8},
                "variant": "auto", "label": label, "ours_us": 10.0, "peers": {"cublas": 10.0 * ratio},
                "best_peer": "cublas", "ratio": ratio, "status": "ok", "reason": None, "notes": {},
                "flop": 1.0, "bytes": None, "tflops": 1.0, "gbps": None, "pct_copy": None,
                "rel_err": 0.0, "check": None, "extra": {"tokens": tokens}, "options": {}}
    meta = {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0", "date": "2026-12-01T00:00:00",
            "git": "abc1234", "quick": quick, "sm_count": 132, "driver": "580", "timing": "events",
            "copy_gbps": 4000.0}
    return {"suite": "models", "meta": meta, "sections": {},
            "records": [record("linear", 1, 1.0, "qkv"), record("linear", 128, 0.5, "o"),
                        record("linear", 128, 2.0, "qkv"), record("rms_norm", 1, 1.5, "norm")]}


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A copy of the README and an empty results folder the generator works on."""
    (tmp_path / "docs").mkdir()
    shutil.copy(readme.README, tmp_path / "README.md")
    monkeypatch.setattr(readme, "CHECKOUT", tmp_path)
    monkeypatch.setattr(readme, "RESULTS", tmp_path / "benchmarks" / "results")
    monkeypatch.setattr(readme, "README", tmp_path / "README.md")
    monkeypatch.setattr(readme, "DOCS", tmp_path / "docs" / "results.md")
    monkeypatch.setattr(readme, "PROBE_JSON", tmp_path / "benchmarks" / "results" / "probe_h200.json")
    return tmp_path


def test_headline_is_the_geomean_per_op_and_token_count(checkout):
    results.write(checkout / "benchmarks" / "results" / "models_h200.json", _models_doc())
    text = readme.headline()
    assert "NVIDIA H200, torch 2.11.0+cu130, 2026-12-01, commit abc1234" in text
    assert "| op | 1 tok | 128 tok | all: geomean (worst) |" in text
    assert "| linear | 1.00× | 1.00× | 1.00× (0.50×) |" in text  # 128: sqrt(0.5 · 2.0)
    assert "| rms_norm | 1.50× | — | 1.50× (1.50×) |" in text


def test_check_fails_on_a_results_file_newer_than_its_tables(checkout, capsys):
    path = checkout / "benchmarks" / "results" / "models_h200.json"
    results.write(path, _models_doc())
    assert readme.main([]) == 0  # writes both
    assert readme.main(["--check"]) == 0
    doc = json.loads(path.read_text())
    doc["records"][0]["ratio"] = 3.0
    results.write(path, doc)
    assert readme.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "README.md is stale" in err and "docs/results.md is stale" in err


def test_a_quick_run_is_shown_only_without_a_full_one_and_says_so(checkout):
    folder = checkout / "benchmarks" / "results"
    results.write(folder / "models_h200_quick.json", _models_doc(quick=True))
    assert "(a --quick run)" in readme.headline()
    assert "`python -m torch_memopt.bench models --quick`" in readme.docs_text()
    results.write(folder / "models_h200.json", _models_doc())
    assert "(a --quick run)" not in readme.headline()


def test_docs_name_every_suite_even_without_results(checkout):
    text = readme.docs_text()
    for name in ("models", "ops", "gemm-ladder", "tensor-core", "transformer-gemm", "norms",
                 "add-norm", "constant-memory", "e2e"):
        assert f"## {name}: " in text
    assert "_No results yet: run `python -m torch_memopt.bench norms` on the H200._" in text
