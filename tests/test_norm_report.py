"""The norm / softmax results outside the run: the README section
(norm_bench.report.markdown through benchmarks/readme_tables.py) and the chart
(benchmarks/plot_norm.py). CPU only: they read JSON, nothing is timed."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import plot_norm  # noqa: E402
import readme_tables  # noqa: E402
from norm_bench import report as nb_report  # noqa: E402

QUICK = ROOT / "benchmarks" / "results" / "norm_bench_quick_h200.json"
BYTES = 4 * (2 * 16384 * 4096 + 2 * 4096)  # layer_norm fp32: x, y, weight, bias


def _record(variant: str, ms: float, **extra) -> dict:
    gbps = BYTES / (ms * 1e-3) / 1e9
    return {"op": "layer_norm", "dtype": "float32", "group": "bandwidth",
            "shape": {"rows": 16384, "N": 4096}, "variant": variant,
            "kind": "peer" if variant in ("eager", "compile", "liger") else "ours",
            "status": "ok", "reason": None, "bytes": BYTES, "ms": ms, "us": ms * 1e3, "gbps": gbps,
            "pct_copy": 100 * gbps / 4000.0, "ratio": None, "correct": True, "target": None,
            "verdict": None, **extra}


@pytest.fixture
def document():
    meta = {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0", "date": "2026-11-29T22:49",
            "timing": "do_bench medians", "bytes": "input + output + weight (+ bias)", "quick": True,
            "peers": {"liger": "liger_kernel is not importable"}}
    records = [_record("eager", 0.2), _record("compile", 0.15),
               _record("auto", 0.14, ratio=0.15 / 0.14, target={"ratio": 1.0, "pct_copy": 90.0},
                       verdict="PASS")]
    return {"meta": meta, "copy": {"bytes": 2 ** 31, "gbps": 4000.0}, "records": records}


def test_markdown_has_the_bandwidth_header_and_a_row(document):
    text = nb_report.markdown(document, chart="benchmarks/results/x.png")
    assert ("| op | dtype | rows×N | MB moved | copy GB/s | eager GB/s | compile GB/s | auto GB/s | "
            "auto % copy | auto × best peer | target | result |") in text
    gbps = BYTES / 0.14e-3 / 1e9
    assert (f"| layer_norm | float32 | 16384×4096 | 537 | 4,000 | 2,685 | 3,579 | {gbps:,.0f} | "
            f"{100 * gbps / 4000:.1f}% | 1.07× | ≥ 1.00×, ≥ 90% copy | PASS |") in text
    assert "Liger-Kernel not measured: liger_kernel is not importable" in text  # no column of "skip"
    assert "decode rows" not in text.lower()  # no decode records: no empty table
    assert "](benchmarks/results/x.png)" in text and text.endswith("Acceptance (`auto`): 1 PASS.")
    assert "![" not in nb_report.markdown(document)  # no chart: no broken image link


def _auto(dtype: str, eager_ms: float, ms: float, **extra) -> dict:
    """An ``auto`` bandwidth record whose eager / ours ratio is eager_ms / ms."""
    return _record("auto", ms, dtype=dtype, eager_ms=eager_ms, verdict="PASS", **extra)


def test_eager_geomean_of_known_ratios():
    records = [_auto("float32", 1.0, 1.0), _auto("bfloat16", 0.8, 0.2),  # 1.0× and 4.0×
               _auto("bfloat16", 5.0, 1.0, group="decode"),  # not a bandwidth row
               _record("eager", 1.0, eager_ms=1.0)]  # not auto
    geomean = nb_report.eager_geomean(records)
    assert geomean["all"] == pytest.approx(2.0) and geomean["count"] == 2
    assert geomean["float32"] == pytest.approx(1.0) and geomean["bfloat16"] == pytest.approx(4.0)
    assert nb_report.eager_geomean_line(records) == (
        "geomean over eager (auto, 2 bandwidth shapes): 2.00× (float32 1.00×, bfloat16 4.00×); "
        "target ≥ 1.3×: PASS")


def test_eager_geomean_leaves_out_wrong_skipped_and_untimed_rows():
    records = [_auto("float32", 2.0, 1.0), _auto("float32", 9.0, 1.0, correct=False),
               _auto("float32", 9.0, 1.0, status="skipped"), _auto("float32", None, 1.0)]
    assert nb_report.eager_geomean(records) == {"all": pytest.approx(2.0),
                                                "float32": pytest.approx(2.0), "count": 1}


def test_eager_geomean_below_target_is_a_miss_in_report_and_markdown(document):
    document["records"] = [_auto("float32", 1.2, 1.0), _auto("float32", 1.2, 1.0)]
    sentence = ("geomean over eager (auto, 2 bandwidth shapes): 1.20× (float32 1.20×); "
                "target ≥ 1.3×: MISS")
    lines = []
    nb_report.report(document, out=lines.append)
    assert lines[-2].startswith("acceptance (auto): ") and lines[-1] == sentence
    assert nb_report.markdown(document).endswith(
        "Acceptance (`auto`): 2 PASS. G" + sentence[1:] + ".")


def test_no_eager_times_no_geomean_line(document):
    assert nb_report.eager_geomean(document["records"]) == {}
    lines = []
    nb_report.report(document, out=lines.append)
    assert lines[-1].startswith("acceptance (auto): ")
    assert "geomean" not in nb_report.markdown(document).lower()


def test_readme_falls_back_to_the_quick_file(tmp_path, monkeypatch, document):
    monkeypatch.setattr(readme_tables, "RESULTS", tmp_path)
    monkeypatch.setattr(readme_tables, "ROOT", tmp_path)
    assert readme_tables.source(readme_tables.NORM_FILES).name == "norm_bench_h200.json"
    (tmp_path / "norm_bench_quick_h200.json").write_text(json.dumps(document))
    (tmp_path / "norm_bench_quick_h200.png").write_bytes(b"png")
    section = readme_tables.results_section()
    assert "`python benchmarks/norm_bench.py --quick`" in section
    assert "Source: `norm_bench_quick_h200.json`." in section
    assert "](norm_bench_quick_h200.png)" in section


def test_plot_writes_a_png_beside_nothing_but_out(tmp_path):
    pytest.importorskip("matplotlib", reason="plot_norm.py draws with matplotlib")
    out = tmp_path / "norm.png"
    assert plot_norm.main(["--json", str(QUICK), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 1000


def test_plot_keeps_the_biggest_call_at_a_repeated_n(document):
    small = _record("auto", 0.01)
    small.update(shape={"rows": 1024, "N": 4096}, bytes=BYTES // 16)
    document["records"].append(small)
    auto = document["records"][2]
    assert plot_norm.series(document)[("layer_norm", "float32")]["auto"] == [(4096, auto["gbps"])]


def test_plot_without_matplotlib_exits_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert plot_norm.main(["--json", str(QUICK)]) == 2
    assert "needs matplotlib" in capsys.readouterr().err


def test_readme_check_passes():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "readme_tables.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
