"""torch_memopt.gemm_plan: what auto runs for a shape, asked of a described GPU (no GPU
needed): the rung by dtype, capability and M, the wgmma tile by estimated time, splitk
where few tiles meet a long K (never wgmma_split), and clear errors for bad arguments."""
import pytest
import torch

import torch_memopt

H200 = {"capability": (9, 0), "sm_count": 132}


def plan(M, N, K, dtype=torch.bfloat16, **kw):
    return torch_memopt.gemm_plan(M, N, K, dtype, **{**H200, **kw})


def test_rung_by_dtype_capability_and_m():
    assert plan(4096, 4096, 4096, torch.float32)["variant"] == "warptiled"
    assert plan(32, 4096, 4096)["variant"] == "splitk"
    assert plan(1, 4096, 4096)["variant"] == "gemv"
    assert plan(64, 4096, 14336)["variant"] == "splitk"  # 64 tiles of 64 x 64, 224 k-tiles
    assert plan(64, 4096, 4096)["variant"] == "wgmma"  # 64 tiles, 64 k-tiles: 19.0 us vs 20.8
    assert plan(64, 1024, 4096)["variant"] == "splitk"  # 16 tiles, 64 k-tiles
    assert plan(64, 6144, 4096)["variant"] == "wgmma"  # 96 tiles of 64 x 64
    assert plan(64, 4096, 4096, aligned=False)["variant"] == "gemv"
    assert plan(64, 4096, 4096, capability=(8, 0))["variant"] == "gemv"
    assert plan(4096, 4096, 4096, capability=(8, 9))["variant"] == "mma"
    assert plan(4096, 4096, 4096, capability=(7, 5))["variant"] == "naive"
    assert plan(4096, 4096, 4096)["variant"] == "wgmma"


# The tile of the least estimated time (waves x k-tiles x a wave's per-k-tile time, the
# H200 sweeps'): each pick below is the sweep's fastest config at that layer, or within 2%
# (benchmarks/results/tune/wgmma_tiles_h200.json, the Llama layers;
# wgmma_tiles_encoders_h200.json, the hidden-768 ones; both 2026-12-04).
@pytest.mark.parametrize("M, N, K, tile", [
    (64, 6144, 4096, (64, 64)),      # 96 tiles: one wave
    (64, 28672, 4096, (64, 256)),    # 112 tiles
    (128, 4096, 4096, (64, 64)),     # 128 tiles (cuBLAS's kernel: 64 x 64 too)
    (128, 6144, 4096, (128, 64)),    # 96 tiles
    (128, 12288, 4096, (64, 192)),   # 128 tiles: 37.6 us against 128 x 128's 38.3
    (256, 4096, 4096, (128, 64)),    # 128 tiles; 64 x 128 ties and loses to two consumers
    (256, 12288, 4096, (128, 192)),  # 128 tiles, one wave: 44.4 us against 128 x 64's 52.6
    (512, 4096, 4096, (128, 128)),   # 128 tiles
    (512, 6144, 4096, (128, 192)),   # 128 tiles: 39.9 us against 128 x 64's 49.9
    (512, 12288, 4096, (128, 192)),  # 2 waves: 74.8 us against 128 x 128's 77.9
    (2048, 4096, 4096, (128, 256)),  # compute-bound: the big tile's 690 TFLOP/s
    (4096, 4096, 4096, (128, 256)),
    # 12 k-tiles: wgmma_tiles_encoders_h200.json has 128 x 192 at 13.8 us, 128 x 64 and
    # 128 x 128 at 16.0, 128 x 256 at 16.4.
    (4096, 768, 768, (128, 192)),
    (1576, 30522, 768, (128, 256)),  # BERT's MLM decoder: 198.6 us, 128 x 192 197.1 (< 2%)
    # 128-row tiles end half past M = 192 (1.7x a k-tile; wgmma_tiles_m192_m256_h200.json):
    # 64 x 128 took 23.8 / 59.6 us against 128 x 64's 30.1 / 91.0. A fifth of them cut
    # at 576 cost nothing: 128 x 192 37.7 us, 64 x 192 52.6 (wgmma_tiles_partial_rows_h200).
    # 128 x 168 (125 tiles, one wave, not yet measured) is estimated below 128 x 192 there;
    # gemm's row-major b keeps 128 x 192 (test_128x168_for_linear_in_16_bits_only).
    (192, 4096, 4096, (64, 128)),
    (192, 4096, 14336, (64, 128)),
    (576, 4096, 4096, (128, 168)),
    (576, 4096, 14336, (128, 168)),
])
def test_wgmma_tile_by_estimated_time(M, N, K, tile):
    p = plan(M, N, K)
    assert (p["variant"], p["tile"]) == ("wgmma", tile), p
    assert p["tiles"] == -(-M // tile[0]) * -(-N // tile[1])
    assert p["ctas"] == min(p["tiles"], 132)
    assert p["splits"] == 1


# Every shape of the Llama layers (M 64-8192) and the BERT / ViT ones (M 1576 / 4096, K 768
# / 3072) whose pick moved to 128 x 168 when it was added (541 ns a wave's k-tile,
# interpolated between 128 x 128 and 128 x 192; on an H100 it beat 128 x 192 at 128-512 x
# 22016 and tied it at 1576 x 3072 x 768, wgmma_tiles_168_*_h100.json; the other rows are
# not measured), with the pick before it,
# which gemm's row-major b (no 168-column tile: B loads in 64-column boxes) and tf32 keep.
# N = 22016 at M = 256 / 512: 132 tile columns, so 264 / 528 tiles fill exactly 2 / 4
# waves (128 x 192: 1.74 waves at 256; 128 x 256: a partial last wave at 512).
TILE_168_PICKS = [
    (128, 22016, 4096, (128, 192)),
    (256, 22016, 4096, (128, 192)),
    (320, 28672, 4096, (64, 192)),
    (384, 6144, 4096, (128, 192)),
    (384, 12288, 4096, (64, 192)),
    (384, 28672, 4096, (128, 256)),
    (448, 22016, 4096, (64, 256)),
    (512, 22016, 4096, (128, 256)),
    (576, 4096, 4096, (128, 192)),
    (576, 4096, 11008, (128, 192)),
    (576, 4096, 14336, (128, 192)),
    (576, 22016, 4096, (64, 256)),
    (640, 4096, 4096, (128, 192)),
    (640, 4096, 11008, (128, 192)),
    (640, 4096, 14336, (128, 192)),
    (640, 22016, 4096, (128, 192)),
    (768, 6144, 4096, (64, 192)),
    (1576, 3072, 768, (128, 192)),
    (1576, 3072, 3072, (128, 192)),
]


@pytest.mark.parametrize("M, N, K, before", TILE_168_PICKS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
def test_128x168_for_linear_in_16_bits_only(M, N, K, before, dtype):
    p = plan(M, N, K, dtype)
    assert (p["variant"], p["tile"]) == ("wgmma", (128, 168)), p
    assert p["tiles"] == -(-M // 128) * -(-N // 168)
    assert plan(M, N, K, dtype, layout="gemm")["tile"] == before
    for layout in ("linear", "gemm"):
        assert plan(M, N, K, torch.float32, tf32=True, layout=layout)["tile"] != (128, 168)


def test_gate_up_at_256_and_512_tokens_fills_whole_waves():
    for M, waves in ((256, 2), (512, 4)):
        p = plan(M, 22016, 4096)
        assert p["tile"] == (128, 168) and p["tiles"] == waves * 132, p


def test_128x168_forced_runs_only_where_it_is_built():
    """_C._set_wgmma_tile(128, 168) holds for linear's layout in 16 bits; gemm's row-major
    b and tf32 get 128 x 192, the nearest tile built for them."""
    from torch_memopt import _C

    assert _C._wgmma_linear_only_tiles() == [(128, 168)]
    _C._set_wgmma_tile(128, 168)
    try:
        assert plan(4096, 4096, 4096)["tile"] == (128, 168)
        assert plan(4096, 4096, 4096, torch.float16)["tile"] == (128, 168)
        assert plan(4096, 4096, 4096, layout="gemm")["tile"] == (128, 192)
        for layout in ("linear", "gemm"):
            p = plan(4096, 4096, 4096, torch.float32, tf32=True, layout=layout)
            assert (p["variant"], p["tile"]) == ("wgmma_tf32", (128, 192)), p
    finally:
        _C._set_wgmma_tile(0, 0)


# Tiles for under a quarter of the SMs: splitk past 32 k-tiles up to M = 128 (under half
# of them past 64 k-tiles up to M = 256), else the tile rule; auto takes wgmma_split nowhere (the fastest config at none of the 89 swept
# shapes). wgmma_tiles_encoders_small_h200.json, 2026-12-04.
@pytest.mark.parametrize("M, N, K, variant", [
    (128, 768, 3072, "splitk"),   # 24 tiles, 48 k-tiles: 11.9 us against 64 x 64's 14.7
    (128, 768, 768, "wgmma"),     # 12 k-tiles: 64 x 64 at 7.7 us, splitk 12.6, wgmma_split 15.3
    (128, 1024, 4096, "splitk"),  # 32 tiles, 64 k-tiles: 13.3 us against 17.2 (gqa_bias)
    (128, 1024, 2048, "wgmma"),   # 32 k-tiles: not past the bound
    (256, 1024, 4096, "wgmma"),   # 64 tiles of 64 x 64: not under a quarter
    (192, 768, 4096, "wgmma"),    # past 128 rows
    # Under half the SMs past 64 k-tiles, to M = 256 (wgmma_tiles_m192_m256_h200.json):
    (256, 1024, 14336, "splitk"),  # 64 tiles, 224 k-tiles: 34.5 us against 64 x 64's 46.3
    (192, 1024, 14336, "splitk"),  # 48 tiles: 38.0 against 46.8
    (320, 1024, 14336, "wgmma"),   # past 256 rows
])
def test_few_tiles_take_splitk_past_32_k_tiles_and_never_wgmma_split(M, N, K, variant):
    p = plan(M, N, K)
    assert p["variant"] == variant, p
    assert p["splits"] == 1


# Decode rows: gemv on linear's weight layout where its grid needs no split-K (N >= 24 x 132
# = 3168) up to N = 16384, or below that with K <= 1024; splitk elsewhere (benchmarks/results/tune/
# decode_rungs_h200.json, decode_rungs_small_h200.json, decode_rungs_auto_h200.json: H200 µs,
# gemv against splitk).
@pytest.mark.parametrize("M, N, K, layout, variant", [
    (1, 4096, 4096, "linear", "gemv"),      # 16.7 against 17.4
    (8, 4096, 11008, "linear", "gemv"),     # 31.7 against 35.1
    (16, 6144, 4096, "linear", "gemv"),     # 22.9 against 23.4
    (16, 12288, 4096, "linear", "gemv"),    # 36.5 against 37.9
    (1, 16384, 2048, "linear", "gemv"),     # 25.6 against 27.6
    (1, 3168, 4096, "linear", "gemv"),      # the least N without a split on 132 SMs
    (1, 3167, 4096, "linear", "splitk"),
    (1, 3072, 2048, "linear", "splitk"),    # gemv splits K: 14.0 against 10.9
    (8, 1024, 4096, "linear", "splitk"),    # 12.4 against 10.0
    (1, 22016, 4096, "linear", "splitk"),   # 55.0 against 55.4: past 16384, lost at 16 rows
    (16, 28672, 4096, "linear", "splitk"),  # 73.0 against 70.7
    (17, 4096, 4096, "linear", "splitk"),
    (1, 2304, 768, "linear", "gemv"),       # K <= 1024 (GPT-2's qkv): 7.8 against 8.6
    (16, 768, 768, "linear", "gemv"),       # 8.5 against 8.8
    (8, 768, 3072, "linear", "splitk"),     # GPT-2's proj, K = 3072: 11.7 against 8.9
    (1, 1024, 1025, "linear", "splitk"),
    (1, 30522, 768, "linear", "splitk"),    # short K past 16384 columns: not measured
    (1, 4096, 4096, "gemm", "splitk"),      # row-major b: gemv's other kernel, not measured
])
def test_decode_rows_take_gemv_where_it_streams_without_a_split(M, N, K, layout, variant):
    assert plan(M, N, K, layout=layout)["variant"] == variant
    assert plan(M, N, K, torch.float16, layout=layout)["variant"] == variant


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((0, 4096, 4096), {}, ValueError, r"M must be >= 1, got 0"),
    ((128, 4096.0, 4096), {}, TypeError, r"N must be an int, got float"),
    ((128, 4096, 4096, torch.int8), {}, TypeError, r"dtype must be one of"),
    ((128, 4096, 4096), {"capability": (9, 0)}, ValueError, r"pass both capability and sm_count"),
    ((128, 4096, 4096), {"capability": (9, 0), "sm_count": 0}, ValueError, r"sm_count must be >= 1"),
    ((1, 4096, 4096), {"layout": "nk"}, ValueError, r"layout must be 'linear' or 'gemm', got 'nk'"),
])
def test_bad_arguments_name_themselves(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        torch_memopt.gemm_plan(*args, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="asks the current GPU when one is present")
def test_without_a_gpu_it_asks_for_one_described():
    with pytest.raises(RuntimeError, match=r"no CUDA device; pass capability"):
        torch_memopt.gemm_plan(128, 4096, 4096)


def test_the_tuning_overrides_set_the_split_and_the_tile_and_are_checked():
    from torch_memopt import _C

    with pytest.raises(ValueError, match=r"expected 0 \(the rule\) to 8, got 9"):
        _C._set_wgmma_splits(9)
    with pytest.raises(ValueError, match=r"expected one of \(0, 0\) \(the rule\), \(128, 256\)"):
        _C._set_wgmma_tile(96, 64)
    previous = _C._set_wgmma_splits(3)
    try:  # wgmma_split's split count (variant="wgmma_split"), not auto's rung
        assert plan(128, 768, 768)["variant"] == "wgmma"
    finally:
        _C._set_wgmma_splits(previous)
    _C._set_wgmma_tile(64, 128)
    try:
        assert plan(4096, 4096, 4096)["tile"] == (64, 128)
    finally:
        _C._set_wgmma_tile(0, 0)
    assert plan(4096, 4096, 4096)["tile"] == (128, 256)


def test_float32_takes_wgmma_tf32_only_when_tf32_is_allowed_on_hopper():
    assert plan(4096, 4096, 4096, torch.float32, tf32=False)["variant"] == "warptiled"
    p = plan(4096, 4096, 4096, torch.float32, tf32=True)
    assert (p["variant"], p["tile"]) == ("wgmma_tf32", (128, 256)), p
    assert plan(128, 4096, 4096, torch.float32, tf32=True)["tile"] == (64, 64)  # the 16-bit rule
    assert plan(4096, 4096, 4096, torch.float32, tf32=True, capability=(8, 0))["variant"] == "warptiled"
    assert plan(4096, 4096, 4096, torch.bfloat16, tf32=True)["variant"] == "wgmma"
