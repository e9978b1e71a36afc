"""memopt inside PyTorch's tensor parallelism (issue 19), on the CPU: 2 gloo ranks spawned
from pytest, memopt's CPU kernels (use_cpu_kernels), DTensor through the sharding rules
of torch_memopt/sharding.py.

- An MLP (Linear -> GELU -> Linear) parallelized colwise / rowwise with
  ``parallelize_module``, under ``enable()`` and after ``optimize_``.
- A Llama-shaped decoder block (RMSNorm, q/k/v/o with grouped-query heads, softmax
  attention, SwiGLU MLP) with sequence-parallel norms: q/k/v and gate/up colwise from
  sequence-sharded input, o and down rowwise back to sequence-sharded output.
- Every op called straight on DTensors, under the placements its rule lists and under
  ones no rule fits (DTensor must redistribute, never fail).

Each case is checked against the unparallelized stock computation in float32 on the same
inputs in one process, and the parallel models must really run the memopt ops (the
profiler's op names), not fall back to the stock ones.
"""
from __future__ import annotations

import datetime
import json
import os

import pytest
import torch
import torch.distributed as dist

from conftest import free_port
from torch_memopt.testing.tp_block import LlamaShapedBlock, parallelize_block

WORLD = 2
TOLERANCE = 1e-5  # float32, relative to the output's largest magnitude

pytestmark = pytest.mark.skipif(
    not (dist.is_available() and dist.is_gloo_available()),
    reason="needs torch.distributed with the gloo backend")


def _rel(out, ref) -> float:
    return float((out - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def _memopt_ops_run(fn) -> set[str]:
    from torch.profiler import profile

    with profile() as prof:
        fn()
    return {e.name for e in prof.events() if e.name.startswith("memopt::")}


# --- the models --------------------------------------------------------------------------

def _mlp():
    from torch import nn

    return nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 24))


# --- the cases, run on every rank ----------------------------------------------------------

def _memopt_way(model, x, how):
    """A call of the parallel ``model`` on ``x`` through memopt: after ``optimize_``
    (done here, once) or inside ``enable()``."""
    import torch_memopt

    if how == "optimize_":
        torch_memopt.optimize_(model)
        return lambda: model(x)

    def run():
        with torch_memopt.enable():
            return model(x)
    return run


def _case_mlp(mesh, how):
    import torch_memopt
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    torch.manual_seed(0)
    model, x = _mlp(), torch.randn(5, 7, 16)
    with torch.no_grad():
        ref = model(x)
        parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        with torch_memopt.use_cpu_kernels():
            run = _memopt_way(model, x, how)
            out = run()
            ran = _memopt_ops_run(run)
    return _rel(out, ref), ran, {"memopt::linear"}


def _case_block(mesh, how):
    import torch_memopt
    from torch.distributed.tensor import Shard, distribute_tensor

    torch.manual_seed(0)
    block, x = LlamaShapedBlock(), torch.randn(2, 12, 64)
    with torch.no_grad():
        ref = block(x)
        parallelize_block(block, mesh)
        xs = distribute_tensor(x, mesh, [Shard(1)])  # the sequence split over the ranks
        with torch_memopt.use_cpu_kernels():
            run = _memopt_way(block, xs, how)
            out = run().full_tensor()
            ran = _memopt_ops_run(run)
    wanted = {"memopt::linear", "memopt::rms_norm"} | ({"memopt::softmax"} if how == "enable" else set())
    return _rel(out, ref), ran, wanted


def _case_ops(mesh):
    """Every op straight on DTensors: (worst error, ops run, ops wanted)."""
    import torch.nn.functional as F

    import torch_memopt
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    torch.manual_seed(0)
    d = lambda t, *p: distribute_tensor(t, mesh, list(p))  # noqa: E731
    x, w, b = torch.randn(6, 8, 16), torch.randn(12, 16), torch.randn(12)
    r = torch.randn(6, 8, 16)
    nw, nb = torch.randn(16), torch.randn(16)
    a2, b2 = torch.randn(10, 16), torch.randn(16, 14)
    cases = [
        # linear: colwise, rowwise (bias once), rowwise with an activation (no Partial
        # then), tokens, and the input sharded where no rule has it (redistributed)
        (lambda: torch_memopt.linear(d(x, Replicate()), d(w, Shard(0)), d(b, Shard(0))),
         F.linear(x, w, b)),
        (lambda: torch_memopt.linear(d(x, Shard(2)), d(w, Shard(1)), d(b, Replicate())),
         F.linear(x, w, b)),
        (lambda: torch_memopt.linear(d(x, Shard(2)), d(w, Shard(1)), d(b, Replicate()),
                                     activation="gelu"), F.gelu(F.linear(x, w, b))),
        (lambda: torch_memopt.linear(d(x, Shard(0)), d(w, Replicate()), None), F.linear(x, w)),
        (lambda: torch_memopt.linear(d(x, Shard(1)), d(w, Shard(1)), None, activation="silu"),
         F.silu(F.linear(x, w))),
        (lambda: torch_memopt.gemm(d(a2, Shard(1)), d(b2, Shard(0))), a2 @ b2),
        (lambda: torch_memopt.gemm(d(a2, Shard(0)), d(b2, Shard(1))), a2 @ b2),
        (lambda: torch_memopt.layer_norm(d(x, Shard(0)), [16], d(nw, Replicate()),
                                         d(nb, Replicate())),
         F.layer_norm(x, [16], nw, nb)),
        (lambda: torch_memopt.layer_norm(d(x, Shard(1)), [8, 16]), F.layer_norm(x, [8, 16])),
        (lambda: torch_memopt.rms_norm(d(x, Shard(2)), [16], d(nw, Replicate()), 1e-6),
         F.rms_norm(x, [16], nw, 1e-6)),
        (lambda: torch_memopt.add_rms_norm(d(x, Shard(1)), d(r, Shard(1)), [16],
                                           d(nw, Replicate()), 1e-6)[0],
         F.rms_norm(x + r, [16], nw, 1e-6)),
        (lambda: torch_memopt.add_layer_norm(d(x, Shard(0)), d(r, Replicate()), [16],
                                             d(nw, Replicate()), d(nb, Replicate()))[1], x + r),
        (lambda: torch_memopt.softmax(d(x, Shard(0)), -1), torch.softmax(x, -1)),
        (lambda: torch_memopt.softmax(d(x, Shard(1)), 1), torch.softmax(x, 1)),
    ]
    worst = 0.0
    for index, (call, ref) in enumerate(cases):
        out = call()
        full = out.full_tensor() if hasattr(out, "full_tensor") else out
        err = _rel(full, ref)
        if not err < TOLERANCE:
            raise AssertionError(f"direct case {index}: relative error {err:.2e}")
        worst = max(worst, err)
    ran = _memopt_ops_run(lambda: [call() for call, _ in cases])
    wanted = {f"memopt::{op}" for op in ("linear", "gemm", "layer_norm", "rms_norm", "softmax",
                                          "add_layer_norm", "add_rms_norm")}
    return worst, ran, wanted


CASES = {
    "mlp_enable": lambda mesh: _case_mlp(mesh, "enable"),
    "mlp_optimize_": lambda mesh: _case_mlp(mesh, "optimize_"),
    "llama_block_enable": lambda mesh: _case_block(mesh, "enable"),
    "llama_block_optimize_": lambda mesh: _case_block(mesh, "optimize_"),
    "every_op_on_dtensors": _case_ops,
}


def _worker(rank, world, port, outdir):
    # Both ranks live on this machine: gloo on the loopback interface, not on whatever
    # address the hostname resolves to (a fresh CI container's may not be reachable).
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (world,))
    results = {}
    for name, case in CASES.items():
        try:
            err, ran, wanted = case(mesh)
            missing = sorted(wanted - ran)
            ok = err < TOLERANCE and not missing
            detail = f"relative error {err:.2e}" + (f"; did not run {missing}" if missing else "")
        except Exception as exc:  # reported per case, so one failure leaves the rest
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        results[name] = {"ok": ok, "detail": detail}
        dist.barrier()
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


SPAWN_TRIES = 3  # a fresh port each: free_port's port can be taken before rank 0 binds it


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    outdir = str(tmp_path_factory.mktemp("tp"))
    failures = []
    for _ in range(SPAWN_TRIES):
        try:
            torch.multiprocessing.spawn(_worker, args=(WORLD, free_port(), outdir), nprocs=WORLD)
            break
        except Exception as exc:  # a rank died outside its per-case try: a start, not a result
            failures.append(f"{type(exc).__name__}: {exc}")
    else:
        pytest.fail(f"the {WORLD} gloo ranks failed to start {SPAWN_TRIES} times:\n"
                    + "\n".join(failures))
    per_rank = []
    for rank in range(WORLD):
        with open(os.path.join(outdir, f"rank{rank}.json")) as f:
            per_rank.append(json.load(f))
    return per_rank


@pytest.mark.parametrize("name", list(CASES))
def test_tensor_parallel_matches_the_unparallelized_stock_model(results, name):
    for rank, per_case in enumerate(results):
        assert per_case[name]["ok"], f"rank {rank}: {per_case[name]['detail']}"
