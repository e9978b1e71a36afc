"""benchmarks/constant_memory.py (the constant-memory case study): the parts that run
without a GPU. The measurement itself runs on the H200."""

import pytest
import torch

from bench_script import assert_exits_2_without_a_gpu, assert_help_mentions
from bench_script import load as load_script


def load():
    return load_script("constant_memory")


def test_help_runs_without_a_gpu():
    assert_help_mentions("constant_memory", "__constant__")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the exit without a GPU")
def test_exits_2_without_a_gpu(tmp_path):
    assert_exits_2_without_a_gpu("constant_memory", tmp_path)


def test_table_rows_put_the_claim_beside_our_speedup():
    module = load()
    records = [{"kernel": "global", "us": 40.0, "gbps": 3000.0, "vs_global": 1.0, "claim": None},
               {"kernel": "const_stats", "us": 38.0, "gbps": 3158.0, "vs_global": 40 / 38,
                "claim": "2.3×"}]
    assert module.speedup_rows(records) == [["global", "40.0", "3,000", "1.00×", "—"],
                                            ["const_stats", "38.0", "3,158", "1.05×", "2.3×"]]
    assert list(module.CLAIMS) == list(module.KERNELS)
