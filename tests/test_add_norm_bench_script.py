"""benchmarks/add_norm_bench.py (fused add + norm against the stock pair): the parts
that run without a GPU. The measurement itself runs on the H200."""

import pytest
import torch

from bench_script import assert_exits_2_without_a_gpu, assert_help_mentions
from bench_script import load as load_script


def load():
    return load_script("add_norm_bench")


def test_help_runs_without_a_gpu():
    assert_help_mentions("add_norm_bench", "fused")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the exit without a GPU")
def test_exits_2_without_a_gpu(tmp_path):
    assert_exits_2_without_a_gpu("add_norm_bench", tmp_path)


@pytest.mark.parametrize("op", ["add_rms_norm", "add_layer_norm"])
def test_fused_and_stock_pair_agree_on_cpu(op):
    # The two calls the script times compute the same thing (the CPU kernels here).
    module = load()
    x, r, w = torch.randn(7, 64), torch.randn(7, 64), torch.randn(64)
    out, total = module.fused(op)(x, r, w)
    ref_out, ref_total = module.stock_pair(op)(x, r, w)
    torch.testing.assert_close(total, ref_total)
    torch.testing.assert_close(out, ref_out, rtol=1e-5, atol=1e-5)


def test_table_puts_fused_beside_both_peers():
    module = load()
    base = {"op": "add_rms_norm", "dtype": "bfloat16", "rows": 8192, "n": 4096}
    records = [{**base, "call": "fused", "ms": 0.040, "gbps": 3355.0},
               {**base, "call": "eager", "ms": 0.100},
               {**base, "call": "compile", "ms": 0.050}]
    lines = module.table(records)
    assert "× eager" in lines[0] and "× compile" in lines[0]
    assert "8192×4096" in lines[1]
    assert "2.50×" in lines[1] and "1.25×" in lines[1] and "3,355" in lines[1]
