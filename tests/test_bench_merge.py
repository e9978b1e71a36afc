"""bench.merge: runs of one suite on one GPU model and commit become one document whose
records are each run's own, and runs that differ, or time one case twice, are refused.
CPU only: JSON in, JSON out."""
import pytest

from torch_memopt.bench import merge, readme, results


def _doc(dtype: str, copy: float, git: str = "abc1234", rows=(1, 8)) -> dict:
    def record(r):
        return {"suite": "norm-grid", "op": "rms_norm", "dtype": dtype, "shape": {"rows": r, "N": 2050},
                "variant": "auto", "label": "", "ours_us": 5.0 + r, "peers": {"liger": 6.0},
                "best_peer": "liger", "ratio": 6.0 / (5.0 + r), "status": "ok", "reason": None,
                "notes": {}, "flop": None, "bytes": 1000.0 * r, "tflops": None, "gbps": 1.0,
                "pct_copy": 100.0 / copy, "rel_err": 0.0, "check": None, "extra": {}, "options": {}}
    meta = {"gpu": "NVIDIA H200", "gpu_slug": "h200", "torch": "2.11.0+cu130", "cuda": "13.0",
            "git": git, "quick": False, "built_with_cuda": True, "sm_count": 132, "driver": "580",
            "timing": "events", "copy_gbps": copy, "date": f"2026-12-06T0{len(dtype) % 10}:00:00",
            "wall_s": 250.0, "rep_ms": 30.0, "cross_check": False,
            "argv": ["norm-grid", "--dtype", dtype, "--out", "/root/out/x", "--plot"]}
    return results.document("norm-grid", meta, [record(r) for r in rows])


def test_records_are_each_runs_own_and_meta_lists_the_runs():
    bf16, fp32 = _doc("bfloat16", 4200.0), _doc("float32", 4300.0)
    doc = merge.merge([bf16, fp32])
    assert doc["records"] == bf16["records"] + fp32["records"]
    assert [p["argv"][2] for p in doc["meta"]["parts"]] == ["bfloat16", "float32"]
    assert doc["meta"]["copy_gbps"] == pytest.approx(4250.0)
    assert doc["meta"]["wall_s"] == 500.0
    assert doc["meta"]["date"] == max(bf16["meta"]["date"], fp32["meta"]["date"])
    assert "argv" not in doc["meta"]


def test_runs_of_other_commits_are_refused():
    with pytest.raises(merge.MergeError, match="meta.git differs: 'abc1234' and 'def5678'"):
        merge.merge([_doc("bfloat16", 4200.0), _doc("float32", 4300.0, git="def5678")])


def test_a_case_timed_twice_is_refused():
    with pytest.raises(merge.MergeError, match="in part 0 and part 1"):
        merge.merge([_doc("bfloat16", 4200.0, rows=(1, 8)), _doc("bfloat16", 4200.0, rows=(8, 64))])


def test_one_document_is_not_a_merge():
    with pytest.raises(merge.MergeError, match="at least 2"):
        merge.merge([_doc("bfloat16", 4200.0)])


def test_the_command_writes_the_merge_and_the_docs_name_each_run(tmp_path, capsys):
    paths = []
    for dtype, copy in (("bfloat16", 4200.0), ("float32", 4300.0)):
        paths.append(results.write(tmp_path / dtype / "norm-grid_h200.json", _doc(dtype, copy)))
    out = tmp_path / "norm-grid_h200.json"
    assert merge.main([str(out), *map(str, paths)]) == 0
    doc = results.read(out)
    assert len(doc["records"]) == 4
    line = readme.parts_text(doc["meta"])
    assert "in 2 runs" in line
    assert "`--dtype bfloat16`" in line and "`--dtype float32`" in line and "/root/out" not in line
    assert merge.main([str(out), str(paths[0]), str(paths[0])]) == 2
    assert "in part 0 and part 1" in capsys.readouterr().err
