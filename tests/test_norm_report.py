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
