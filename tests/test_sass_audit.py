"""The built kernels' machine code, read without a GPU (torch_memopt/testing/sass_audit.py):
on CI too, wherever the extension was built with CUDA. Two properties the timings rest on,
each lost once unseen between runs on the H200 (docs/perf-notes.md, 2026-12-04):

- 16-bit rows read in 16-byte loads: the norm kernels' and softmax's online kernels' 16-byte
  packs once compiled to 8 predicated 2-byte loads each (11744 over the norm kernels);
- no spills where none are wanted: the early norm instances that hold the parameters in
  registers (uncapped), the GEMM kernels, and each norm and softmax file's stack bytes at
  most what they are now (a few bytes of spills at the 64-register cap cost layer_norm
  8-12% at 16384 rows);
- every load of a short row's kernel in flight before it waits on one: the early layer_norm
  instances' parameters, split into registers as each arrived, went to memory five times in
  turn (2026-12-05).

A ceiling below is raised only with the ptxas figures and a measurement in perf-notes."""
import pytest

import torch_memopt
from torch_memopt.testing import sass_audit

TOOL = sass_audit.cuobjdump()
pytestmark = pytest.mark.skipif(not torch_memopt.built_with_cuda() or TOOL is None,
                                reason="needs the extension built with CUDA and a cuobjdump")

# Stack bytes (spills and local arrays) summed over each file's kernels, sm_90a, nvcc 13.0
# (CI's build of ba759dc). The GEMM kernels hold none. With the explicit roundings of
# kernels/normalize.cuh (0ac68c2): norm_cuda 24 -> 32 (2 bytes of spills in one late
# 32-thread rms_norm kernel, 16-bit rows with fp32 weights; each other spelling moved more
# elsewhere), the peeled file 232 -> 224, the 2-byte packs 3104 -> 3072.
STACK_CEILING = {"norm_cuda": 32, "norm_packs_peeled": 224, "norm_packs_8": 8,
                 "norm_packs_4": 40, "norm_packs_2": 3072, "softmax_cuda": 8,
                 "softmax_narrow": 40, "softmax_peeled": 304, "softmax_staged": 0,
                 **{gemm: 0 for gemm in ("gemv", "splitk_sm90", "transpose_fp32", "wgmma_sm90",
                                         "wgmma_split_sm90", "wgmma_streamk_128",
                                         "wgmma_streamk_sm90", "wgmma_tiles_64", "wgmma_tiles_128",
                                         "wgmma_tiles_168", "wgmma_tiles_192", "ladder_warptiled",
                                         "mma_sm80")}}
NORM = "norm_vectorized_kernel"  # template values: rms, threads, add, cluster, vecs, pack bytes, peel, early
SOFTMAX = "softmax_online_kernel"  # template values: threads, vecs, raw, pack bytes, peel


@pytest.fixture(scope="module")
def cubins(tmp_path_factory) -> dict:
    from torch_memopt import _C

    folder = str(tmp_path_factory.mktemp("cubins"))
    found = {source: sass_audit.cubin_of(_C.__file__, TOOL, source, folder)
             for source in STACK_CEILING}
    missing = [source for source, cubin in found.items() if cubin is None]
    if missing:  # built for other targets (TORCH_CUDA_ARCH_LIST): nothing here to read
        pytest.skip(f"no sm_90 cubin for {missing} in {_C.__file__}")
    return found


def _whole_pack_kernels(cubin: str, kernel: str, pack_at: int, peel_at: int) -> dict:
    """The 16-bit, 16-byte-pack, unpeeled instances of ``kernel``: name -> SASS."""
    return {name: body for name, body in sass_audit.sass(cubin, TOOL).items()
            if kernel in name and sass_audit.first_type_is_16_bit(name, kernel)
            and sass_audit.template_values(name)[pack_at] == 16
            and sass_audit.template_values(name)[peel_at] == 0}


@pytest.mark.parametrize("source,kernel,pack_at,peel_at",
                         [("norm_cuda", NORM, 5, 6), ("softmax_cuda", SOFTMAX, 3, 4)])
def test_16_bit_rows_are_read_in_16_byte_loads(cubins, source, kernel, pack_at, peel_at):
    kernels = _whole_pack_kernels(cubins[source], kernel, pack_at, peel_at)
    assert len(kernels) >= 40, f"{source}: only {len(kernels)} {kernel} instances found"
    bad = {name: sass_audit.loads(body, "U16") for name, body in kernels.items()
           if sass_audit.loads(body, "U16") or not sass_audit.loads(body, "128")}
    assert not bad, f"{source}: 2-byte global loads (or no 16-byte ones) in {bad}"


def test_early_norm_instances_with_parameters_in_registers_do_not_spill(cubins):
    checked = 0
    for source in ("norm_cuda", "norm_packs_peeled", "norm_packs_8", "norm_packs_4", "norm_packs_2"):
        usage = sass_audit.resource_usage(cubins[source], TOOL)
        for name, use in usage.items():
            values = sass_audit.template_values(name) if NORM in name else []
            if values and values[-1] == 1 and values[1] <= 256:
                checked += 1
                assert use["STACK"] == 0, f"{source}: {name} has {use['STACK']} stack bytes"
    assert checked >= 300, f"only {checked} early instances found"


@pytest.mark.parametrize("source", sorted(STACK_CEILING))
def test_stack_bytes_stay_under_their_ceiling(cubins, source):
    usage = sass_audit.resource_usage(cubins[source], TOOL)
    total = sum(use["STACK"] for use in usage.values())
    worst = sorted(((use["STACK"], name) for name, use in usage.items()), reverse=True)[:3]
    assert total <= STACK_CEILING[source], f"{source}: {total} stack bytes (ceiling " \
        f"{STACK_CEILING[source]}); the largest: {worst}"


@pytest.mark.parametrize("source", ["norm_cuda", "norm_packs_peeled"])
def test_early_norm_instances_issue_every_load_before_using_one(cubins, source):
    """The early 16-byte instances that hold the parameters in registers (up to 256 threads a
    row, one CTA) load the row, the residual (kAdd), the weight and the bias (LayerNorm),
    kVecs packs each, before any instruction reads one of them. The peeled ones are checked
    on their 16- and 8-byte loads: their edges' single elements, and their parameters' path
    for 2-byte alignment (odd widths), which joins halves into words as they arrive and comes
    first in the SASS, are left out. (The narrow-pack kernels use their row's first packs
    after 4-5 of 16-32 loads, from their register pressure: perf-notes, 2026-12-05.)"""
    widths = ("128", "64") if source == "norm_packs_peeled" else None
    short, checked = {}, 0
    for name, body in sass_audit.sass(cubins[source], TOOL).items():
        if NORM not in name:
            continue
        rms, threads, add, cluster, vecs, _, _, early = sass_audit.template_values(name)
        if not (early and threads <= 256 and cluster == 1):
            continue
        checked += 1
        wanted = vecs * (1 + add + 1 + (1 - rms))  # row, residual, weight, bias
        issued = sass_audit.loads_before_first_use(body, widths)
        if issued < wanted:
            short[name] = f"{issued} of {wanted} loads before the first use"
    assert checked >= 80, f"{source}: only {checked} early instances found"
    assert not short, f"{source}: loads issued after a use of an earlier one: {short}"
