"""benchmarks/constant_memory.py (the constant-memory case study): the parts that run
without a GPU. The measurement itself runs on the H200."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "constant_memory.py"


def load():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("constant_memory_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help_runs_without_a_gpu():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "__constant__" in result.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the exit without a GPU")
def test_exits_2_without_a_gpu(tmp_path):
    out = tmp_path / "cm.json"
    assert load().main(["--out", str(out)]) == 2
    assert not out.exists()


def test_table_rows_put_the_claim_beside_our_speedup():
    module = load()
    records = [{"kernel": "global", "us": 40.0, "gbps": 3000.0, "vs_global": 1.0, "claim": None},
               {"kernel": "const_stats", "us": 38.0, "gbps": 3158.0, "vs_global": 40 / 38,
                "claim": "2.3×"}]
    assert module.speedup_rows(records) == [["global", "40.0", "3,000", "1.00×", "—"],
                                            ["const_stats", "38.0", "3,158", "1.05×", "2.3×"]]
    assert list(module.CLAIMS) == list(module.KERNELS)
