"""What each suite measures, read off its case list without timing anything (the GPU
lists too: building a case allocates nothing), and the suites' own figures: the
ladder's speed-up over naive, the constant-memory verdicts, the e2e steps."""
import pytest
import torch

from torch_memopt.bench.suites import SUITES, Context, constant_memory, e2e, gemm_ladder, models

CUDA = torch.device("cuda")


def case_list(suite: str, quick: bool, device=CUDA, **filters) -> list:
    return SUITES[suite].cases(Context(device=device, quick=quick, **filters))


def test_model_layers_are_the_published_configs():
    llama = next(m for m in models.MODELS if m.name == "llama-3-8b")
    layers = {layer: (op, shape, options) for layer, op, shape, options in models.layer_shapes(llama, 128)}
    assert layers["qkv"] == ("linear", {"M": 128, "N": 4096 + 2 * 8 * 128, "K": 4096}, {"bias": False})
    assert layers["up"][1] == {"M": 128, "N": 2 * 14336, "K": 4096}  # gate and up in one GEMM
    assert layers["up"][2]["activation"] == "none"  # SwiGLU's product is not fusable
    assert layers["down"][1] == {"M": 128, "N": 4096, "K": 14336}
    assert layers["norm"] == ("rms_norm", {"rows": 128, "N": 4096}, {"eps": 1e-5})
    assert layers["vocab"] == ("softmax", {"rows": 128, "N": 128256}, {})
    assert layers["attention"] == ("softmax", {"rows": 32 * 128, "N": 128}, {})
    gpt2 = next(m for m in models.MODELS if m.name == "gpt-2")
    gpt2_layers = {layer: rest for layer, *rest in models.layer_shapes(gpt2, 1)}
    assert gpt2_layers["up"][2] == {"bias": True, "activation": "gelu_tanh"}
    assert "attention" not in gpt2_layers  # one token has no attention matrix to softmax


def test_default_suite_covers_every_op_at_every_token_count():
    cases = case_list("models", quick=False)
    assert len(cases) == 6 * (9 + 3 + 3 + 4) + 3 * 2
    assert {c.extra["tokens"] for c in cases} == {1, 16, 128, 512, 2048, 8192}
    assert {c.op for c in cases} == {"linear", "rms_norm", "layer_norm", "add_rms_norm",
                                     "add_layer_norm", "softmax"}
    assert all(c.dtype == "bfloat16" for c in cases)
    shared = [c for c in cases if c.label == "llama-3-8b, mistral-7b qkv"]
    assert len(shared) == 6  # one case for a shape two models share
    peers = {c.op: {i.name for i in c.impls if i.kind == "peer"} for c in cases}
    assert peers["rms_norm"] == {"eager", "compile", "liger"}
    assert peers["add_layer_norm"] == {"eager", "compile"}  # Liger has no fused add + LayerNorm
    up = next(c for c in cases if c.label == "gpt-2 up")
    assert {i.name for i in up.impls if i.kind == "peer"} == {"cublas", "compile"}
    qkv = next(c for c in cases if c.label == "gpt-2, bert-base qkv")
    assert {i.name for i in qkv.impls if i.kind == "peer"} == {"cublas"}


def test_quick_default_suite_is_small():
    cases = case_list("models", quick=True)
    assert len(cases) == 2 * (8 + 2 + 2 + 2) + 2
    assert {c.extra["tokens"] for c in cases} == {16, 2048}


def test_filters_narrow_every_suite():
    cases = case_list("models", quick=False, ops=["rms_norm"], peers=["liger"])
    assert {c.op for c in cases} == {"rms_norm"} and len(cases) == 6
    assert all({i.name for i in c.impls if i.kind == "peer"} == {"liger"} for c in cases)
    assert case_list("norms", quick=False, dtypes=[torch.float16]) == []  # norms: fp32 and bf16


def test_kernel_suites_case_lists():
    ladder = case_list("gemm-ladder", quick=False)
    assert [tuple(c.shape.values()) for c in ladder] == list(gemm_ladder.SIZES)
    assert len(case_list("gemm-ladder", quick=True)) == 2
    tc = case_list("tensor-core", quick=False)
    assert len(tc) == 2 * 14
    assert {c.extra["group"] for c in tc} == {"square", "linear+bias", "odd", "decode"}
    norms = case_list("norms", quick=False)
    assert len(norms) == 2 * ((6 + 3) * 2 + (7 + 3))
    assert len(case_list("add-norm", quick=False)) == 2 * 2 * 4
    assert len(case_list("ops", quick=False)) == 3 * (4 + 2 + 3 * 4 + 3)


def test_ladder_speedup_over_naive_and_the_published_claims():
    def rec(variant, us):
        return {"variant": variant, "shape": {"M": 8, "N": 8, "K": 8}, "ours_us": us,
                "status": "ok", "extra": {}}
    records = [rec("naive", 100.0), rec("coalesced", 50.0), rec("warptiled", 5.0)]
    gemm_ladder.finish(records)
    assert [r["extra"]["speedup_vs_naive"] for r in records] == [1.0, 2.0, 20.0]
    assert [r["extra"]["published_speedup_vs_naive"] for r in records] == [None, 1.8, None]


def test_ladder_rungs_are_the_fp32_ladder_in_order():
    ctx = Context(device=torch.device("cpu"), quick=True)
    assert gemm_ladder.rungs(ctx) == ["reference", "auto"]  # the CPU has one fp32 kernel


@pytest.mark.parametrize("kernel, vs_global, verdict", [
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
    ("const_stats", None, "—"),
])
def test_constant_memory_verdicts_on_the_sources_claims(kernel, vs_global, verdict):
    assert constant_memory.verdict(kernel, vs_global) == verdict


def test_e2e_steps():
    assert e2e.steps("llama", small=False, quick=False) == [("prefill", 8, 512), ("decode", 1, 512),
                                                             ("decode", 8, 512)]
    assert e2e.steps("vit", small=False, quick=False) == [("prefill", 8, 512)]
    assert e2e.steps("gpt2", small=True, quick=True) == [("prefill", 2, 16), ("decode", 1, 16)]
    assert e2e.cosine_error(torch.ones(4), torch.ones(4)) == pytest.approx(0.0, abs=1e-7)
    assert e2e.cosine_error(torch.ones(4), torch.ones(5)) == float("inf")


def test_transformer_gemm_is_cuda_only_and_digests_by_m():
    from torch_memopt.bench.suites import transformer_gemm

    # the CPU reference GEMM would take minutes a case
    assert case_list("transformer-gemm", quick=False, device=torch.device("cpu")) == []
    cases = case_list("transformer-gemm", quick=False)
    assert len(cases) == 8 * 10 * 2 and {c.op for c in cases} == {"linear"}
    assert len(case_list("transformer-gemm", quick=True)) == 8 * 2
    o_proj = [c for c in cases if c.extra["tokens"] == 128 and c.extra["layer"] == "o"]
    assert o_proj[0].extra["plan"] == "wgmma 64x64", o_proj[0].extra

    def rec(M, ratio, dtype="bfloat16"):
        return {"variant": "auto", "status": "ok", "ratio": ratio, "dtype": dtype,
                "extra": {"tokens": M}}
    table = transformer_gemm.digest([rec(128, 0.5), rec(128, 2.0), rec(1, 1.1),
                                     {**rec(1, 9.9), "variant": "wgmma"}])
    lines = table.splitlines()
    assert lines[0] == "| dtype | | M = 1 | M = 128 |"
    assert lines[2] == "| bfloat16 | geomean × cuBLAS | 1.10 | 1.00 |"
    assert lines[3] == "| bfloat16 | worst × cuBLAS | 1.10 | 0.50 |"


def test_norm_grid_is_issue_17s_grid_and_digests_its_targets():
    from torch_memopt.bench.suites import norm_grid

    cases = case_list("norm-grid", quick=False)
    per_dtype_norm, per_dtype_softmax = 9 * 6, 7 * 5 + 5
    assert len(cases) == 2 * (4 * per_dtype_norm + per_dtype_softmax)
    assert {c.op for c in cases} == {"rms_norm", "layer_norm", "add_rms_norm", "add_layer_norm",
                                     "softmax"}
    attention = [c for c in cases if c.label.startswith("attention") and c.dtype == "bfloat16"]
    assert [c.shape["N"] for c in attention] == [128, 197, 512, 1024, 2048]
    assert all(0.99 * 2 ** 27 < c.shape["rows"] * c.shape["N"] <= 2 ** 27 for c in attention)
    # S = 512: the issue's 32 x 16 heads x 512 x 512
    assert {"rows": 32 * 16 * 512, "N": 512} in [c.shape for c in attention]
    assert len(case_list("norm-grid", quick=True)) == 2 * (4 * 2 + 2)
    # fp16 is outside the issue's grid: timed only when --dtype names it
    assert "float16" not in {c.dtype for c in cases}
    asked = case_list("norm-grid", quick=True, dtypes=[torch.float16, torch.bfloat16])
    assert sorted({c.dtype for c in asked}) == ["bfloat16", "float16"] and len(asked) == 2 * 10
    assert all(c.shape["rows"] < 10 for c in case_list("norm-grid", quick=False,
                                                         device=torch.device("cpu")))

    def rec(N, ratio, gbps, pct=95.0, rows=16384, op="rms_norm", nbytes=2 ** 27):
        return {"variant": "auto", "status": "ok", "op": op, "dtype": "bfloat16",
                "shape": {"rows": rows, "N": N}, "ratio": ratio, "gbps": gbps,
                "pct_copy": pct, "bytes": nbytes}
    table = norm_grid.digest([rec(2048, 1.2, 4000), rec(2050, 0.5, 3000, pct=70),
                              rec(4096, 2.0, 4000), rec(4100, 1.0, 3900),
                              {**rec(768, 9.9, 1), "variant": "vectorized"}])
    row = table.splitlines()[2]
    assert row.startswith("| rms_norm | bfloat16 | 4 | 1.05 | 0.50 (16384×2050) |"), row
    assert "16384×2050 70%" in row and "16384×2050 0.75" in row and "4100" not in row
    assert row.endswith("| — |"), row  # no launch floor or copy ceiling in the run: no bound

    # The bound: best peer ÷ (floor + bytes at copy speed). 4 µs over 3 + 2 MB at 2000 GB/s
    # (1 µs) is 1.0; 12 µs over 3 + 8 MB at 2000 GB/s (4 µs) is 12 / 7.
    def timed(rows, peer_us, nbytes):
        return {**rec(4096, 1.0, 1000, rows=rows, nbytes=nbytes),
                "peers": {"eager": 2 * peer_us, "liger": peer_us}}
    table = norm_grid.digest([timed(1, 4.0, 2e6), timed(8, 12.0, 8e6)],
                             {"launch_floor_us": 3.0, "copy_gbps": 2000.0})
    assert table.splitlines()[2].endswith(f"| {(12 / 7) ** 0.5:.2f} (1.00) |"), table
