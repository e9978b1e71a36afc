"""The constant-memory case study in the README (benchmarks/readme_tables.py): the table
rendered from the committed JSON, and the verdict on each of the source's claims. CPU
only: it reads JSON, nothing is timed."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import readme_tables  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "constant_memory_h200.json"
KERNELS = ("global", "const_stats", "const_weights", "ldg_weights")


@pytest.fixture
def document():
    return json.loads(RESULTS.read_text())


def test_table_from_the_committed_json_has_every_kernel_with_a_verdict(document):
    text = readme_tables.constant_memory_table(document)
    lines = text.splitlines()
    shape = document["shape"]
    assert lines[0].startswith(f"{document['meta']['gpu']}, torch ")
    assert f"{shape['rows']} × {shape['channels']} (rows × channels), fp32." in lines[0]
    assert "| kernel | µs | GB/s | × global | source's claim | verdict |" in lines
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ")}
    for record in document["records"]:
        verdict = readme_tables.constant_memory_verdict(record["kernel"], record["vs_global"])
        assert rows[record["kernel"]].endswith(f" | {verdict} |")
    assert set(KERNELS) <= set(rows)
    assert rows["global"].endswith("| — | baseline |")
    assert text.endswith(readme_tables.CONSTANT_MEMORY_WHY)


def test_the_case_study_is_shown_after_the_norms():
    files = [names for names, _, _ in readme_tables.SHOWN]
    assert files.index("constant_memory_h200.json") > files.index(readme_tables.NORM_FILES)


@pytest.mark.parametrize("kernel, vs_global, verdict", [
    ("global", 1.0, "baseline"),
    ("const_stats", 2.3, "holds"),
    ("const_stats", 2.0, "holds"),
    ("const_stats", 0.95, "does not hold: 0.95× measured"),
    ("const_weights", 0.85, "holds"),
    ("const_weights", 0.75, "holds"),
    ("const_weights", 0.195, "slower, as claimed, but by 80%"),
    ("const_weights", 1.0, "does not hold: 1.00× measured"),
    ("ldg_weights", 1.1, "holds"),
    ("ldg_weights", 1.02, "no win: 1.02× measured"),
    ("ldg_weights", 0.977, "no win: 0.98× measured"),
    ("something_else", 3.0, "—"),
])
def test_verdict_on_the_sources_claims(kernel, vs_global, verdict):
    assert readme_tables.constant_memory_verdict(kernel, vs_global) == verdict
