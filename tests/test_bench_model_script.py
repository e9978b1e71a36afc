"""benchmarks/bench_model.py (end-to-end model latency, issue 6): the plumbing, on the
CPU with a small model. The measurement itself runs on the H200."""

import json

import pytest
import torch

from bench_script import assert_exits_2_without_a_gpu, assert_help_mentions, load

pytest.importorskip("transformers", reason="bench_model.py builds Hugging Face models")
pytest.importorskip("timm", reason="bench_model.py builds a timm ViT")


def test_help_runs_without_a_gpu():
    assert_help_mentions("bench_model", "optimize_")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the exit without a GPU")
def test_cuda_run_exits_2_without_a_gpu(tmp_path):
    assert_exits_2_without_a_gpu("bench_model", tmp_path)


def test_small_cpu_run_writes_a_record_per_step_and_variant(tmp_path):
    out = tmp_path / "m.json"
    code = load("bench_model").main(["--small", "--device", "cpu", "--reps", "1",
                                     "--models", "gpt2", "--out", str(out)])
    assert code == 0
    records = json.loads(out.read_text())["records"]
    keys = {(r["step"], r["batch"], r["variant"]) for r in records}
    variants = ("eager", "optimize_", "compile", "optimize_+compile")
    assert keys == {(s, b, v) for s, b in [("prefill", 2), ("decode", 1), ("decode", 2)]
                    for v in variants}
    for r in records:
        assert r["status"] == "ok", r
        assert r["cosine"] >= 0.999 and r["ms"] > 0
    assert all(r["speedup"] == 1.0 for r in records if r["variant"] == "eager")


def test_merge_keeps_other_models_and_replaces_the_measured_one(tmp_path):
    out = tmp_path / "m.json"
    earlier = [{"model": "vit", "step": "prefill", "variant": "eager", "ms": 1.0},
               {"model": "gpt2", "step": "prefill", "variant": "eager", "ms": -1.0}]
    out.write_text(json.dumps({"meta": {"date": "earlier"}, "records": earlier}))
    code = load("bench_model").main(["--small", "--device", "cpu", "--reps", "1", "--merge",
                                     "--models", "gpt2", "--out", str(out)])
    assert code == 0
    document = json.loads(out.read_text())
    records = document["records"]
    assert document["earlier_runs"] == [{"date": "earlier"}]  # where the kept vit record is from
    assert [r for r in records if r["model"] == "vit"] == earlier[:1]
    gpt2 = [r for r in records if r["model"] == "gpt2"]
    assert len(gpt2) == 12 and all(r["ms"] > 0 for r in gpt2)  # the old -1.0 record is gone
    # BUILDERS' order (llama, gpt2, bert, vit), not the order the calls measured them in
    assert [r["model"] for r in records] == ["gpt2"] * 12 + ["vit"]


def test_merge_over_two_models_names_only_the_runs_of_the_kept_records(tmp_path, monkeypatch):
    # The file is written after each model; the second write must not take the first
    # for an earlier run, and runs whose records were all replaced drop out. The models
    # are not run here (the test above runs one): measure gives one record a model.
    bench_model = load("bench_model")
    monkeypatch.setattr(bench_model, "measure", lambda arch, args: [
        {"model": arch, "step": "prefill", "variant": "eager", "ms": 2.0, "status": "ok"}])
    out = tmp_path / "m.json"
    earlier = [{"model": "vit", "step": "prefill", "variant": "eager", "ms": 1.0, "run": "B"},
               {"model": "gpt2", "step": "prefill", "variant": "eager", "ms": 1.0, "run": "C"}]
    out.write_text(json.dumps({"meta": {"date": "C"}, "earlier_runs": [{"date": "B"}, {"date": "A"}],
                               "records": earlier}))
    code = bench_model.main(["--small", "--device", "cpu", "--reps", "1", "--merge",
                             "--models", "gpt2,bert", "--out", str(out)])
    assert code == 0
    document = json.loads(out.read_text())
    assert document["earlier_runs"] == [{"date": "B"}]
    new = [r for r in document["records"] if r["model"] != "vit"]
    assert {r["model"] for r in new} == {"gpt2", "bert"}
    assert all(r["run"] == document["meta"]["date"] for r in new)
