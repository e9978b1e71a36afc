"""benchmarks/constant_memory.py (the constant-memory case study): the parts that run
without a GPU. The measurement itself runs on the H200."""

import pytest
import torch

from bench_script import load as load_script
from bench_script import run


def load():
    return load_script("constant_memory")


def test_help_runs_without_a_gpu():
    result = run("constant_memory", "--help")
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
