"""benchmarks/norm_bench.py's CPU-side pieces: argument parsing, the case list and its
targets, the bytes and GB/s formulas, the calls and their float64 reference, one case
measured through a fake backend (a wrong result, a refused variant, a skipped peer),
the tables and the tally, the JSON document, and the answers without a GPU. No GPU
needed; the file runs in seconds (no torch.compile: the fake backend stands in)."""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import HAS_CUDA

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from norm_bench import calls as nb_calls  # noqa: E402
from norm_bench import cases as nb_cases  # noqa: E402
from norm_bench import measure as nb_measure  # noqa: E402
from norm_bench import report as nb_report  # noqa: E402
from norm_bench import results as nb_results  # noqa: E402

Case = nb_cases.Case


def _script():
    spec = importlib.util.spec_from_file_location("norm_bench_script", ROOT / "benchmarks" / "norm_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the command line -------------------------------------------------------------

def test_cli_defaults_quick_ops_and_dtypes():
    script = _script()
    args = script.parse_args([])
    assert args.cases == nb_cases.FULL_CASES and not args.quick
    assert args.dtypes == ("float32", "bfloat16") and args.ops == nb_cases.OPS
    assert args.out == ROOT / "benchmarks" / "results" / "norm_bench_h200.json"
    quick = script.parse_args(["--quick", "--dtypes", "bf16", "--out", "x.json"])
    assert [(c.op, c.rows, c.N, c.group) for c in quick.cases] == [
        ("layer_norm", 16384, 4096, "bandwidth"), ("rms_norm", 16384, 4096, "bandwidth"),
        ("softmax", 16384, 4096, "bandwidth"), ("rms_norm", 1, 4096, "decode")]
    assert quick.dtypes == ("bfloat16",) and quick.out == Path("x.json")
    assert script.parse_args(["--dtypes", "bfloat16, fp32,bf16"]).dtypes == ("bfloat16", "float32")
    only = script.parse_args(["--ops", "softmax", "--quick"])
    assert only.ops == ("softmax",) and [c.op for c in only.cases] == ["softmax"]


def test_cli_refuses_an_unknown_dtype_or_op(capsys):
    script = _script()
    with pytest.raises(SystemExit):
        script.parse_args(["--dtypes", "fp16"])
    assert "--dtypes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.parse_args(["--ops", "gemm"])
    assert "--ops" in capsys.readouterr().err
    with pytest.raises(ValueError, match="expected dtypes among bfloat16, float32, got 'fp8'"):
        nb_cases.parse_dtypes("bf16,fp8")
    with pytest.raises(ValueError, match="expected at least one of ops"):
        nb_cases.parse_ops(" , ")


# --- cases, bytes, targets ---------------------------------------------------------

def test_full_case_list_is_the_issues():
    by_op = {}
    for case in nb_cases.FULL_CASES:
        by_op.setdefault((case.op, case.group), []).append((case.rows, case.N))
    norms = [(32768, 768), (32768, 1024), (16384, 4096), (8192, 8192), (4096, 12288), (4096, 1000)]
    assert by_op[("layer_norm", "bandwidth")] == norms
    assert by_op[("rms_norm", "bandwidth")] == norms
    assert by_op[("softmax", "bandwidth")] == [(32768, 1024), (16384, 4096), (4096, 32768), (1024, 131072),
                                               (1024, 262144), (65536, 197), (32768, 1000)]
    for op in nb_cases.OPS:
        assert by_op[(op, "decode")] == [(1, 4096), (8, 4096), (64, 4096)]
    assert len(nb_cases.FULL_CASES) == len(set(nb_cases.FULL_CASES)) == 28


def test_bytes_moved_are_input_output_and_parameters():
    assert Case("layer_norm", 32768, 1024).moved_bytes("bfloat16") == 2 * (2 * 32768 * 1024 + 2 * 1024)
    assert Case("rms_norm", 32768, 1024).moved_bytes("float32") == 4 * (2 * 32768 * 1024 + 1024)
    assert Case("softmax", 1024, 262144).moved_bytes("float32") == 4 * 2 * 1024 * 262144
    with pytest.raises(ValueError, match="unknown op or group"):
        Case("gemm", 8, 8)


@pytest.mark.parametrize("case, dtype, ratio, pct_copy", [
    (Case("layer_norm", 32768, 768), "bfloat16", 1.0, 90.0),     # 100.7 MB
    (Case("rms_norm", 4096, 1000), "float32", 1.0, None),        # 32.8 MB: peers only
    (Case("softmax", 65536, 197), "bfloat16", 1.0, None),        # 51.6 MB
    (Case("softmax", 65536, 197), "float32", 1.0, 90.0),         # 103 MB
    (Case("softmax", 1024, 131072), "bfloat16", 1.0, 85.0),      # long rows
    (Case("softmax", 1024, 262144), "float32", 1.0, 85.0),
    (Case("layer_norm", 64, 4096, "decode"), "float32", 1.0, None),
])
def test_targets_are_the_issues(case, dtype, ratio, pct_copy):
    assert case.target(dtype).as_dict() == {"ratio": ratio, "pct_copy": pct_copy}


def test_plan_times_the_peers_auto_and_every_listed_variant():
    case = Case("softmax", 64, 96)
    plan = nb_cases.plan_calls(case, {"softmax": ["auto", "naive", "block"]},
                               {"liger": "liger_kernel is not importable"})
    assert plan == [("eager", "peer", None), ("compile", "peer", None),
                    ("liger", "peer", "liger_kernel is not importable"),
                    ("auto", "ours", None), ("naive", "ours", None), ("block", "ours", None)]
    (auto,) = [p for p in nb_cases.plan_calls(case, {}, {}) if p[0] == "auto"]
    assert auto == ("auto", "ours",
                    "'auto' is not in torch_memopt.variants('softmax', 'cuda') on this build and GPU")


# --- the calls and their reference, on the CPU ------------------------------------

@pytest.mark.parametrize("op", nb_cases.OPS)
def test_eager_and_ours_agree_with_the_float64_reference(op):
    case = Case(op, 16, 100)
    inputs = nb_calls.make_inputs(case, torch.float32, "cpu")
    ref = nb_calls.reference(op, inputs)
    assert ref.dtype == torch.float64 and ref.shape == (16, 100)
    for name in ("eager", "auto"):
        out = nb_calls.function(op, name)(*inputs)
        record = nb_measure.empty_record(case, "float32", name, "peer")
        nb_measure.check(record, out, ref)
        assert record["correct"] is True and record["rel_err"] < 1e-6, (name, record)


def test_liger_is_skipped_with_a_reason_when_not_importable():
    reason = nb_calls.liger_missing()
    if importlib.util.find_spec("liger_kernel") is not None:
        assert reason is None
    else:
        assert reason.startswith("liger_kernel is not importable (ModuleNotFoundError")


def test_check_flags_a_wrong_or_non_finite_output():
    case = Case("softmax", 4, 8)
    ref = torch.full((4, 8), 0.125, dtype=torch.float64)
    record = nb_measure.empty_record(case, "float32", "auto", "ours")
    nb_measure.check(record, torch.full((4, 8), 0.125 * (1 + 2e-5)), ref)
    assert record["correct"] is False and record["reason"].startswith("wrong result: relative error 2.")
    record = nb_measure.empty_record(case, "bfloat16", "auto", "ours")
    nb_measure.check(record, torch.full((4, 8), float("nan")), ref)
    assert record["correct"] is False and record["rel_err"] is None
    assert record["reason"] == "output of a wrong shape or with non-finite values"


# --- one case through a fake backend ----------------------------------------------

class FakeBackend:
    """CPU stand-in for norm_bench.backend.CudaBackend: the real inputs, eager and our
    CPU kernels; "compile" and "liger" run eager, "wrong" returns 1.1x eager, and
    "naive" is refused by the CPU dispatcher (no such CPU variant). Invented times."""

    MS = {"eager": 0.2, "compile": 0.1, "liger": 0.125, "auto": 0.08, "wrong": 0.01}

    def __init__(self, ms=None):
        self.ms = {**self.MS, **(ms or {})}
        self.current = None

    def inputs(self, case, dtype):
        return nb_calls.make_inputs(case, getattr(torch, dtype), "cpu")

    def function(self, case, name):
        self.current = name
        if name in ("compile", "liger"):
            return nb_calls.function(case.op, "eager")
        if name == "wrong":
            eager = nb_calls.function(case.op, "eager")
            return lambda *inputs: eager(*inputs) * 1.1
        return nb_calls.function(case.op, name)

    def probe_ms(self, call):
        call()
        return self.ms[self.current]

    def time(self, call, probe_ms):
        return self.ms[self.current], "do_bench"


AVAILABLE = {op: ["auto", "naive", "wrong"] for op in nb_cases.OPS}
BIG = Case("layer_norm", 256, 512)  # 0.5 MB in fp32: made "large" by lowering the bar
DECODE = Case("rms_norm", 8, 512, "decode")


def fake_run(case, dtype="float32", ms=None, copy_gbps=4000.0, lines=None, skips=None):
    log = lines.append if lines is not None else (lambda line: None)
    plan = nb_cases.plan_calls(case, AVAILABLE, skips if skips is not None else {"liger": "not importable"})
    return nb_measure.measure_case(case, dtype, plan, FakeBackend(ms), copy_gbps=copy_gbps, log=log)


def test_measure_case_rates_relates_and_judges_every_call(monkeypatch):
    monkeypatch.setattr(nb_cases, "LARGE_BYTES", 1)
    lines = []
    records = {r["variant"]: r for r in fake_run(BIG, lines=lines)}
    assert list(records) == ["eager", "compile", "liger", "auto", "naive", "wrong"]
    eager, compiled, liger, auto, naive, wrong = records.values()
    size = 4 * (2 * 256 * 512 + 2 * 512)
    assert auto["bytes"] == eager["bytes"] == size
    assert eager["gbps"] == pytest.approx(size / 0.2e-3 / 1e9) and eager["verdict"] is None
    assert eager["target"] is None and eager["ratio"] is None and eager["correct"] is True
    assert compiled["ms"] == 0.1 and compiled["us"] == pytest.approx(100.0)
    assert liger["status"] == "skipped" and liger["reason"] == "not importable" and liger["ms"] is None
    assert auto["gbps"] == pytest.approx(size / 0.08e-3 / 1e9)
    assert auto["pct_copy"] == pytest.approx(100 * auto["gbps"] / 4000.0)
    assert (auto["peer"], auto["peer_ms"]) == ("compile", 0.1)  # the faster peer
    assert auto["eager_ms"] == 0.2 and auto["compile_ms"] == 0.1
    assert auto["ratio"] == pytest.approx(1.25) and auto["method"] == "do_bench"
    assert auto["target"] == {"ratio": 1.0, "pct_copy": 90.0}
    assert auto["verdict"] == "MISS"  # 1.25x, but a tiny shape is far from 90 % of copy
    assert naive["status"] == "error" and naive["verdict"] is None
    assert naive["reason"].startswith("ValueError: memopt::layer_norm: unknown variant 'naive'")
    assert wrong["correct"] is False and wrong["verdict"] == "WRONG" and wrong["rel_err"] > 0.05
    assert wrong["ms"] is None and wrong["gbps"] is None and wrong["ratio"] is None  # never timed
    assert len(lines) == 6 and "1.25× compile" in lines[3] and "MISS" in lines[3]
    assert "skipped: not importable" in lines[2] and "error" in lines[4] and "WRONG" in lines[5]
    json.dumps(list(records.values()), allow_nan=False)


def test_measure_case_judges_the_copy_bar_and_the_faster_peer(monkeypatch):
    monkeypatch.setattr(nb_cases, "LARGE_BYTES", 1)
    case = Case("softmax", 256, 512)
    size = case.moved_bytes("bfloat16")

    def auto_at(gbps, **peers_ms):
        auto_ms = size / gbps * 1e3
        ms = {"auto": auto_ms, **{name: auto_ms * factor for name, factor in peers_ms.items()}}
        return next(r for r in fake_run(case, "bfloat16", ms=ms) if r["variant"] == "auto")

    passed = auto_at(3640e9, eager=1.0, compile=3.0)  # 91 % of a 4000 GB/s copy, as fast as eager
    assert passed["pct_copy"] == pytest.approx(91.0) and passed["peer"] == "eager"
    assert passed["ratio"] == pytest.approx(1.0) and passed["verdict"] == "PASS"
    slower = auto_at(3640e9, eager=3.0, compile=0.5)  # compile twice as fast: 0.5x
    assert slower["peer"] == "compile" and slower["verdict"] == "MISS"
    short = auto_at(3560e9, eager=2.0, compile=2.0)  # 89 %: short of the copy bar
    assert short["ratio"] == pytest.approx(2.0) and short["verdict"] == "MISS"


def test_decode_rows_are_judged_against_eager_in_microseconds():
    lines = []
    records = {r["variant"]: r for r in fake_run(DECODE, lines=lines)}
    auto = records["auto"]
    assert auto["target"] == {"ratio": 1.0, "pct_copy": None}
    assert (auto["peer"], auto["peer_ms"]) == ("eager", 0.2)  # not the faster compile
    assert auto["ratio"] == pytest.approx(2.5) and auto["verdict"] == "PASS"
    assert auto["us"] == pytest.approx(80.0) and "80.00 µs" in lines[3]
    late = {r["variant"]: r for r in fake_run(DECODE, ms={"auto": 0.3})}
    assert late["auto"]["verdict"] == "MISS"


def test_no_copy_figure_leaves_the_copy_bar_unjudged(monkeypatch):
    monkeypatch.setattr(nb_cases, "LARGE_BYTES", 1)
    auto = next(r for r in fake_run(BIG, copy_gbps=None) if r["variant"] == "auto")
    assert auto["pct_copy"] is None and auto["ratio"] == pytest.approx(1.25) and auto["verdict"] is None


# --- the report --------------------------------------------------------------------

def _document(records):
    meta = {"gpu": "NVIDIA H200", "torch": "2.14.1+cu130", "cuda": "13.0",
            "timing": "do_bench medians, L2 flushed"}
    return nb_results.document(meta, {"bytes": 2 ** 31, "gbps": 4000.0}, records)


def test_tables_put_peers_target_and_verdict_beside_each_shape(monkeypatch):
    monkeypatch.setattr(nb_cases, "LARGE_BYTES", 1)
    records = fake_run(BIG) + fake_run(DECODE, "bfloat16")
    headers, (row,) = nb_report.bandwidth_table(records, 4000.0)
    assert headers == ["op", "dtype", "shape", "MB moved", "copy GB/s", "eager GB/s", "compile GB/s",
                       "Liger GB/s", "auto GB/s", "auto % copy", "auto × best peer", "target", "result"]
    size = BIG.moved_bytes("float32")
    assert row[:5] == ["layer_norm", "float32", "256×512", f"{size / 1e6:.3g}", "4,000"]
    assert row[5] == f"{size / 0.2e-3 / 1e9:.3g}" and row[7] == "skip"
    assert row[9].endswith("%") and row[10:] == ["1.25×", "≥ 1.00×, ≥ 90% copy", "MISS"]
    headers, (row,) = nb_report.decode_table(records)
    assert headers == ["op", "dtype", "shape", "eager µs", "compile µs", "Liger µs", "auto µs",
                       "auto × eager", "target", "result"]
    assert row == ["rms_norm", "bfloat16", "8×512", "200", "100", "skip", "80", "2.50×", "≥ 1.00×",
                   "PASS"]


def test_a_wrong_or_missing_auto_shows_no_figure():
    records = fake_run(Case("softmax", 32, 64))
    auto = next(r for r in records if r["variant"] == "auto")
    auto.update(correct=False, verdict="WRONG", ms=None, gbps=None, ratio=None)
    (row,) = nb_report.bandwidth_table(records, 4000.0)[1]
    assert row[8:11] == ["WRONG"] * 3 and row[-1] == "WRONG"
    auto.update(status="skipped", correct=None, verdict=None)
    (row,) = nb_report.bandwidth_table(records, 4000.0)[1]
    assert row[8] == "skip" and row[-1] == "skip"


def test_console_report_ends_with_the_tables_and_the_tally(monkeypatch):
    monkeypatch.setattr(nb_cases, "LARGE_BYTES", 1)
    lines = []
    nb_report.report(_document(fake_run(BIG) + fake_run(DECODE)), lines.append)
    text = "\n".join(lines)
    assert "device-to-device copy of 2 GiB: 4,000 GB/s" in text
    assert "not measured: liger skipped: not importable" in text
    assert "not measured: naive error: ValueError: memopt::layer_norm: unknown variant 'naive'" in text
    assert "WRONG: wrong float32 layer_norm 256x512: wrong result" in text
    for table in (lines[-5], lines[-3]):
        table = table.splitlines()
        assert table[0].startswith("op") and table[0].rstrip().endswith("result")
        assert len({len(line) for line in table}) == 1  # every row padded to the header's width
    assert lines[-2] == "acceptance (auto): 1 PASS, 1 MISS, 0 WRONG, 0 not measured"
    assert lines[-1].startswith("geomean over eager")


# --- the JSON and the script without a GPU -----------------------------------------

RECORD_KEYS = {"op", "dtype", "group", "shape", "variant", "kind", "status", "reason", "bytes", "method",
               "probe_ms", "ms", "us", "gbps", "pct_copy", "eager_ms", "compile_ms", "peer", "peer_ms",
               "ratio", "rel_err", "correct", "target", "verdict"}


def test_json_document_has_the_documented_shape(tmp_path):
    records = fake_run(DECODE)
    records[0]["gbps"] = math.inf  # one odd figure must not cost the run its file
    path = tmp_path / "results" / "norm.json"
    nb_results.write(path, _document(records))
    loaded = json.loads(path.read_text())
    assert set(loaded) == {"meta", "copy", "records"}
    assert loaded["copy"] == {"bytes": 2 ** 31, "gbps": 4000.0}
    assert len(loaded["records"]) == 6 and loaded["records"][0]["gbps"] is None
    assert all(set(record) == RECORD_KEYS for record in loaded["records"])
    assert loaded["records"][3]["shape"] == {"rows": 8, "N": 512}
    script_doc = _script().__doc__
    assert all(key in script_doc for key in RECORD_KEYS)  # the docstring lists every field


def test_json_safe_drops_non_finite_floats():
    document = {"a": [1.0, math.inf, {"b": math.nan, "c": 2}], "d": (None, "x", -math.inf)}
    assert nb_results.json_safe(document) == {"a": [1.0, None, {"b": None, "c": 2}], "d": [None, "x", None]}


def test_help_runs_without_a_gpu():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "norm_bench.py"), "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "norm_bench_h200.json" in result.stdout


@pytest.mark.skipif(HAS_CUDA, reason="checks the answer of a machine without a GPU")
def test_exits_2_without_a_gpu(tmp_path):
    out = tmp_path / "norm.json"
    assert _script().main(["--quick", "--out", str(out)]) == 2
    assert not out.exists()
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "norm_bench.py"), "--quick",
                             "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "needs a CUDA GPU" in result.stdout
    assert not out.exists()
