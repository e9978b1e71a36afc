"""torch_memopt.gemm_plan: what auto runs for a shape, asked of a described GPU (no GPU
needed): the rung by dtype, capability and M, wgmma_split's K splits where 128 x 256
tiles are fewer than SMs, and clear errors for bad arguments."""
import pytest
import torch

import torch_memopt

H200 = {"capability": (9, 0), "sm_count": 132}


def plan(M, N, K, dtype=torch.bfloat16, **kw):
    return torch_memopt.gemm_plan(M, N, K, dtype, **{**H200, **kw})


def test_rung_by_dtype_capability_and_m():
    assert plan(4096, 4096, 4096, torch.float32)["variant"] == "warptiled"
    assert plan(64, 4096, 4096)["variant"] == "splitk"
    assert plan(64, 4096, 4096, aligned=False)["variant"] == "gemv"
    assert plan(64, 4096, 4096, capability=(8, 0))["variant"] == "gemv"
    assert plan(4096, 4096, 4096, capability=(8, 9))["variant"] == "mma"
    assert plan(4096, 4096, 4096, capability=(7, 5))["variant"] == "naive"
    assert plan(4096, 4096, 4096)["variant"] == "wgmma"


@pytest.mark.parametrize("M, N, K, splits", [
    (128, 4096, 4096, 4),    # 16 tiles: 4 splits at most (the sweep's best)
    (128, 6144, 4096, 4),    # 24 tiles
    (256, 4096, 4096, 4),    # 32 tiles: 33 clusters of 4 fit when packed ideally (30 on an H200)
    (512, 4096, 4096, 2),    # 64 tiles
    (256, 4096, 14336, 4),   # 32 tiles
    (512, 12288, 4096, 1),   # 192 tiles: more than the SMs
    (128, 28672, 4096, 1),   # 112 tiles: one wave already
    (128, 4096, 448, 1),     # 7 k-tiles: too few to split
])
def test_wgmma_split_count_fills_one_wave(M, N, K, splits):
    p = plan(M, N, K)
    assert p["splits"] == splits, p
    assert p["variant"] == ("wgmma_split" if splits > 1 else "wgmma"), p
    assert p["tiles"] == -(-M // 128) * -(-N // 256)
    if splits > 1:
        assert p["ctas"] == p["tiles"] * splits <= 132


def test_ideal_packing_of_a_described_gpu():
    """A described GPU's clusters are assumed packed ideally, sm_count / splits at once:
    at 64 SMs 16 tiles take 4 splits (16 clusters of 4 fit, 12 of 5 would not)."""
    assert plan(128, 4096, 4096, sm_count=64)["splits"] == 4


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((0, 4096, 4096), {}, ValueError, r"M must be >= 1, got 0"),
    ((128, 4096.0, 4096), {}, TypeError, r"N must be an int, got float"),
    ((128, 4096, 4096, torch.int8), {}, TypeError, r"dtype must be one of"),
    ((128, 4096, 4096), {"capability": (9, 0)}, ValueError, r"pass both capability and sm_count"),
    ((128, 4096, 4096), {"capability": (9, 0), "sm_count": 0}, ValueError, r"sm_count must be >= 1"),
])
def test_bad_arguments_name_themselves(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        torch_memopt.gemm_plan(*args, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="asks the current GPU when one is present")
def test_without_a_gpu_it_asks_for_one_described():
    with pytest.raises(RuntimeError, match=r"no CUDA device; pass capability"):
        torch_memopt.gemm_plan(128, 4096, 4096)


def test_the_tuning_override_sets_the_split_and_is_checked():
    from torch_memopt import _C

    with pytest.raises(ValueError, match=r"expected 0 \(the rule\) to 8, got 9"):
        _C._set_wgmma_splits(9)
    previous = _C._set_wgmma_splits(3)
    try:
        assert plan(128, 4096, 4096)["splits"] == 3
        assert plan(4096, 4096, 4096)["variant"] == "wgmma_split"  # forced, even where no split pays
    finally:
        _C._set_wgmma_splits(previous)
    assert plan(128, 4096, 4096)["splits"] == 4
