"""The harness's parts, on the CPU: the timing plan, the L2 rotation and the interleaved
latency timer; the runner's verdicts (a wrong result is never timed, a peer that cannot
run is a note, a rung refusing the dtype is skipped); the records' arithmetic, geomean
and worst; the tables; the JSON files; the op catalog's formulas and references."""
import json
import math

import pytest
import torch

from conftest import requires_cuda
from torch_memopt.bench import calls, peers, report, results, timing
from torch_memopt.bench.case import Case, Impl, make_case
from torch_memopt.bench.record import Record, finish, geomean, summarize
from torch_memopt.bench.runner import run_case

CPU = torch.device("cpu")


# --- timing ---------------------------------------------------------------------------

def test_reps_plan_caps_slow_calls_and_gives_fast_ones_ten_reps():
    assert timing.reps_for(2200.0, 100.0) == (0, 3)  # naive at 8192³: 3 reps, no warm-up
    assert timing.reps_for(150.0, 100.0) == (0, 6)  # inside the 1 s budget
    assert timing.reps_for(40.0, 100.0) == (1, 10)  # at least ten samples
    assert timing.reps_for(0.01, 100.0) == (100, 1000)  # capped
    assert timing.reps_for(0.0, 100.0) == (100, 1000)  # a zero estimate is not a division


def test_l2_rotation_covers_twice_the_l2():
    l2 = 60 * 2**20
    assert timing.input_set_count(8 * 2**20, l2) == 15  # 15 x 8 MiB >= 2 x 60 MiB
    assert timing.input_set_count(512 * 2**20, l2) == 2  # never the same inputs twice in a row
    assert timing.input_set_count(1024, l2) == 16  # capped
    assert timing.input_set_count(8 * 2**20, 0) == 1  # the CPU: no rotation


def test_kernel_timer_on_the_cpu_takes_samples_of_the_call():
    count = []
    result = timing.KernelTimer(CPU, rep_ms=1.0).time(lambda: count.append(1))
    assert len(result.samples_us) >= timing.MIN_REPS and result.median_us >= 0
    assert len(count) >= len(result.samples_us) + 1  # the estimate, warm-up and samples
    assert "perf_counter" in result.method


@requires_cuda
@pytest.mark.cuda
def test_kernel_timer_leaves_a_slow_launcher_out_of_the_kernel_time():
    """A call whose host side takes 300 µs before a ~2 µs kernel: the events must time the
    kernel, not the launcher (before the pad they read the host's 300 µs and more)."""
    import time

    x = torch.randn(1024, device="cuda")

    def slow_launcher():
        end = time.perf_counter() + 300e-6
        while time.perf_counter() < end:
            pass
        x.add_(1.0)

    kernel = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0).time(lambda: x.add_(1.0))
    slow = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0).time(slow_launcher)
    assert slow.median_us < kernel.median_us + 20.0, (slow.median_us, kernel.median_us)
    assert "host ahead by" in slow.method


def test_kernel_timer_names_its_flushes():
    with pytest.raises(ValueError, match="flush must be one of"):
        timing.KernelTimer(CPU, flush="cold")


def test_kernel_timer_takes_a_pad_it_can_give():
    with pytest.raises(ValueError, match=r"pad_us must be in \[0, 500\], got -1"):
        timing.KernelTimer(CPU, pad_us=-1)


@requires_cuda
@pytest.mark.cuda
def test_kernel_timer_pads_every_call_at_least_as_asked():
    """A common pad is the floor of each call's own: the figure stays the kernel's."""
    x = torch.randn(2**20, device="cuda")
    padded = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0, pad_us=200.0).time(x.neg)
    own = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0).time(x.neg)
    pad = float(padded.method.split("host ahead by ")[1].split(" us")[0])
    assert pad >= 200.0, padded.method
    assert padded.median_us < own.median_us + 5.0, (padded.median_us, own.median_us)


@requires_cuda
@pytest.mark.cuda
def test_deep_flush_zeroes_its_buffer_and_names_bad_ones():
    """The deep flush (csrc/probe/l2_flush.cu) leaves its buffer zero, like the plain
    one, and the timer says which flush it ran."""
    import torch_memopt  # noqa: F401  (torch.ops.memopt_probe)

    buffer = torch.ones(3 * 2**20 + 32, dtype=torch.int32, device="cuda")  # not a 16 KB multiple
    torch.ops.memopt_probe.l2_flush_deep(buffer)
    assert int(buffer.count_nonzero()) == 0
    with pytest.raises(RuntimeError, match="expected buffer to be contiguous"):
        torch.ops.memopt_probe.l2_flush_deep(buffer.view(-1, 32)[:, :16])
    with pytest.raises(RuntimeError, match="whole 128-byte lines"):
        torch.ops.memopt_probe.l2_flush_deep(buffer[:33])
    x = torch.randn(2**20, device="cuda")
    deep = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0, flush="deep").time(x.neg)
    assert "L2 flushed deep" in deep.method and deep.median_us > 0


@requires_cuda
@pytest.mark.cuda
def test_kernel_timer_without_a_flush_finds_the_inputs_in_l2():
    """A 32 MiB read fits the H200's L2: unflushed it must not be slower than flushed,
    and each says which it was."""
    x = torch.randn(8 * 2**20, device="cuda")
    flushed = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0).time(x.sum)
    warm = timing.KernelTimer(torch.device("cuda"), rep_ms=20.0, flush="none").time(x.sum)
    assert "L2 not flushed" in warm.method and "L2 flushed" in flushed.method
    assert warm.median_us <= flushed.median_us * 1.05, (warm.median_us, flushed.median_us)


def test_interleaved_latency_rotates_the_order_and_times_every_call():
    order = []
    calls_ = {name: (lambda name=name: order.append(name)) for name in "abc"}
    times = timing.interleaved_median_ms(calls_, 4, "cpu")
    assert set(times) == {"a", "b", "c"} and all(t >= 0 for t in times.values())
    warm, timed = order[:9], order[9:]
    assert warm == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert timed == list("abc" "bca" "cab" "abc")  # each call first in turn


def test_timer_cross_check_rotates_the_input_sets():
    seen = []
    us = timing.timer_us(lambda x: seen.append(x), [(1,), (2,), (3,)], min_run_time=0.01)
    assert us > 0 and set(seen) == {1, 2, 3}


def test_no_copy_ceiling_on_the_cpu():
    assert timing.copy_gbps(CPU) is None
    assert timing.launch_floor_us(CPU) is None


# --- the runner -----------------------------------------------------------------------

def _toy_case(ours: dict, peers_: dict, reference=lambda inputs: inputs[0] * 2) -> Case:
    return Case(suite="toy", op="double", dtype="float32", shape={"N": 64},
                impls=[Impl(n, "ours", lambda f=f: f) for n, f in ours.items()]
                + [Impl(n, "peer", lambda f=f: f) for n, f in peers_.items()],
                make_inputs=lambda: (torch.randn(64),), reference=reference, tolerance=1e-6,
                bytes=512.0)


def _unavailable():
    raise peers.Unavailable("not installed here")


def test_runner_times_right_results_and_never_a_wrong_one():
    def refuses_dtype(x):
        raise TypeError("memopt::double: variant 'tiled' takes float16 only")

    case = _toy_case({"good": lambda x: x * 2, "wrong": lambda x: x * 3, "tiled": refuses_dtype},
                     {"stock": lambda x: x + x})
    case.impls.append(Impl("missing", "peer", _unavailable))
    records, outcomes = run_case(case, timing.KernelTimer(CPU, rep_ms=1.0))
    by_variant = {r.variant: r for r in records}
    good, wrong, tiled = by_variant["good"], by_variant["wrong"], by_variant["tiled"]
    assert good.status == "ok" and good.ours_us > 0 and good.rel_err == 0.0
    assert good.best_peer == "stock" and math.isclose(good.ratio, good.peers["stock"] / good.ours_us)
    assert good.peers["missing"] is None and good.notes["missing"] == "Unavailable: not installed here"
    assert wrong.status == "wrong" and wrong.ours_us is None and wrong.ratio is None
    assert wrong.reason.startswith("relative error 5.00e-01 above 1e-06")
    assert tiled.status == "skipped" and "takes float16 only" in tiled.reason
    assert outcomes["good"].samples_us and not outcomes["wrong"].samples_us


def test_a_wrong_peer_is_no_best_peer():
    case = _toy_case({"good": lambda x: x * 2}, {"broken": lambda x: x, "stock": lambda x: x * 2})
    (record,), _ = run_case(case, timing.KernelTimer(CPU, rep_ms=1.0))
    assert record.peers["broken"] is None and record.best_peer == "stock"
    assert "relative error" in record.notes["broken"]


def test_without_a_reference_the_first_peer_is_the_truth():
    case = _toy_case({"same": lambda x: x * 2, "off": lambda x: x * 2 + 1},
                     {"stock": lambda x: x * 2}, reference=None)
    records, _ = run_case(case, timing.KernelTimer(CPU, rep_ms=1.0))
    assert [r.status for r in records] == ["ok", "wrong"]


def test_cross_check_fills_the_timer_ratio():
    case = _toy_case({"good": lambda x: x * 2}, {"stock": lambda x: x + x})
    (record,), _ = run_case(case, timing.KernelTimer(CPU, rep_ms=1.0), cross_check_s=0.01)
    assert record.check["ours_us"] > 0 and record.check["peers"]["stock"] > 0
    assert math.isclose(record.check["ratio"], record.check["peers"]["stock"] / record.check["ours_us"])


# --- records, tables, files -----------------------------------------------------------

def _record(op, ratio, label="", status="ok", variant="auto"):
    record = Record(suite="s", op=op, dtype="bfloat16", shape={"M": 8, "N": 4, "K": 2},
                    variant=variant, label=label, ours_us=10.0 if status == "ok" else None,
                    peers={"cublas": 10.0 * ratio}, flop=2.0 * 8 * 4 * 2, status=status)
    return finish(record, copy_gbps=None).as_dict()


def test_finish_computes_ratio_rates_and_copy_share():
    record = finish(Record(suite="s", op="rms_norm", dtype="float32", shape={"rows": 1, "N": 1},
                           variant="auto", ours_us=2.0, peers={"eager": 3.0, "liger": None},
                           bytes=4000.0), copy_gbps=4.0)
    assert record.best_peer == "eager" and record.ratio == 1.5
    assert record.gbps == pytest.approx(2.0) and record.pct_copy == pytest.approx(50.0)
    assert record.tflops is None


def test_summary_is_a_geomean_with_the_worst_case_and_leaves_wrong_results_out():
    records = [_record("linear", 0.5, "o"), _record("linear", 2.0, "qkv"),
               _record("linear", 9.0, "up", status="wrong"), _record("gemm", 1.0)]
    (linear, gemm) = summarize(records)
    assert linear.op == "linear" and linear.count == 2 and linear.geomean == pytest.approx(1.0)
    assert linear.worst["label"] == "o" and gemm.geomean == pytest.approx(1.0)
    assert geomean([0.5, 2.0]) == pytest.approx(1.0)
    line = report.summary_line(records)
    assert line == "ours (auto speed) ÷ best peer, geomean (worst): linear 1.00× (worst 0.50×), " \
                   "gemm 1.00× (worst 1.00×)"
    assert report.summary_lines(records)[0].startswith("linear: 1.00× geomean over 2 cases, worst "
                                                       "0.50× at o bfloat16 8x4x2 vs cublas")


def test_tables_show_every_peer_and_no_figure_for_a_wrong_result():
    records = [_record("linear", 0.5, "o"), _record("linear", 2.0, "up", status="wrong")]
    text = report.aligned(records)
    header, _, right, wrong = text.splitlines()
    assert header.split() == ["op", "dtype", "case", "shape", "ours", "µs", "cublas", "µs", "×",
                              "best", "TFLOP/s"]
    assert right.split()[-2:] == ["0.50×", "1.3e-05"]
    assert wrong.split()[-4:] == ["WRONG", "20", "—", "—"]  # the peer's time, no ratio, no rate
    md = report.markdown(records).splitlines()
    assert md[1] == "|---|---|---|---|---:|---:|---:|---:|"
    cases = report.markdown([_record("linear", 1.0), _record("linear", 2.0, variant="mma")],
                            layout="cases").splitlines()
    assert cases[0] == "| op | dtype | shape | cublas µs | auto µs | mma µs | × best (auto) | TFLOP/s |"
    assert len(cases) == 3  # one row for the case


def test_compare_table_is_torch_utils_benchmarks_own():
    text = report.compare_table([report.measurement("gemm float32", "8x8x8", "auto", [1.0, 2.0, 3.0]),
                                 report.measurement("gemm float32", "8x8x8", "cublas", [4.0])])
    assert "gemm float32" in text and "auto" in text and "cublas" in text and "us" in text


def test_results_file_names_and_strict_json(tmp_path):
    assert results.file_name("models", "h200", False) == "models_h200.json"
    assert results.file_name("norms", "cpu", True) == "norms_cpu_quick.json"
    assert results.json_safe({"a": [1.0, math.inf, (math.nan, 2)]}) == {"a": [1.0, None, [None, 2]]}
    doc = results.document("toy", {"gpu": None}, [_record("gemm", 1.0)], {"kernels": {}})
    path = results.write(tmp_path / "sub" / "toy.json", doc)
    assert results.read(path) == json.loads(json.dumps(doc)) and doc["records"][0]["op"] == "gemm"


def test_finish_sweep_writes_and_fails_on_wrong_configs(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    assert results.finish_sweep(out, {"gpu": "x"}, {"records": [{"us": math.nan}]}, []) == 0
    assert results.read(out) == {"meta": {"gpu": "x"}, "records": [{"us": None}], "wrong": []}
    assert results.finish_sweep(None, {}, {}, ["tile 64x64 at 1x1x1: two runs differ"]) == 1
    assert "WRONG: tile 64x64 at 1x1x1: two runs differ" in capsys.readouterr().out


# --- the op catalog -------------------------------------------------------------------

def test_work_formulas():
    dims = calls.matmul_shape(2, 3, 5)
    assert calls.work("gemm", dims, torch.float32, {}) == (60.0, 4.0 * (10 + 15 + 6))
    assert calls.work("linear", dims, torch.bfloat16, {"bias": True}) == (60.0, 2.0 * (10 + 15 + 6 + 3))
    rows = calls.rows_shape(4, 8)
    assert calls.work("layer_norm", rows, torch.float16, {}) == (None, 2.0 * (2 * 32 + 2 * 8))
    assert calls.work("rms_norm", rows, torch.float32, {}) == (None, 4.0 * (2 * 32 + 8))
    assert calls.work("softmax", rows, torch.bfloat16, {}) == (None, 2.0 * (2 * 32))
    assert calls.work("add_rms_norm", rows, torch.float32, {}) == (None, 4.0 * (4 * 32 + 8))
    assert calls.work("add_layer_norm", rows, torch.float32, {}) == (None, 4.0 * (4 * 32 + 16))


@pytest.mark.parametrize("op, shape, options", [
    ("gemm", calls.matmul_shape(7, 5, 3), {}),
    ("linear", calls.matmul_shape(7, 5, 3), {"bias": True, "activation": "gelu_tanh"}),
    ("layer_norm", calls.rows_shape(7, 33), {}),
    ("rms_norm", calls.rows_shape(7, 33), {"eps": 1e-5}),
    ("rms_norm", calls.rows_shape(7, 33), {}),
    ("softmax", calls.rows_shape(7, 33), {}),
    ("add_rms_norm", calls.rows_shape(7, 33), {}),
    ("add_layer_norm", calls.rows_shape(7, 33), {"eps": 1e-12}),
])
def test_stock_and_ours_agree_with_the_float64_reference(op, shape, options):
    inputs = calls.make_inputs(op, shape, torch.float32, CPU, options)
    ref = calls.reference(op, inputs, options)
    assert calls.relative_error(calls.stock(op, options)(*inputs), ref) < 1e-5
    with torch.no_grad():
        assert calls.relative_error(calls.ours(op, "auto", options)(*inputs), ref) < 1e-5


def test_relative_error_refuses_a_wrong_shape_or_a_nan():
    ref = torch.ones(3)
    assert calls.relative_error(torch.ones(4), ref) == math.inf
    assert calls.relative_error(torch.tensor([1.0, math.nan, 1.0]), ref) == math.inf
    assert calls.relative_error((torch.ones(3),), (ref, ref)) == math.inf


def test_peers_serve_by_op_and_device():
    cuda = torch.device("cuda")
    assert peers.serves("cublas", "linear", cuda) and not peers.serves("cublas", "linear", CPU)
    assert peers.serves("eager", "linear", CPU) and not peers.serves("eager", "linear", cuda)
    assert peers.serves("liger", "add_rms_norm", cuda) and not peers.serves("liger", "add_layer_norm", cuda)
    assert not peers.serves("liger", "rms_norm", CPU)
    with pytest.raises(ValueError, match="unknown peer 'numpy'"):
        peers.serves("numpy", "gemm", CPU)
    assert list(peers.runnable(["cublas", "liger", "eager"], "rms_norm", {}, CPU)) == ["eager"]
    case = make_case("s", "rms_norm", torch.float32, calls.rows_shape(2, 8), device=CPU,
                     variants=["auto"], peer_names=["cublas", "eager", "liger"])
    assert [(i.name, i.kind) for i in case.impls] == [("auto", "ours"), ("eager", "peer")]


def test_the_commit_can_be_named_where_the_copy_has_no_git_of_its_own(monkeypatch):
    from torch_memopt.bench import environment

    monkeypatch.setenv("MEMOPT_GIT_COMMIT", "5e43a66")
    assert environment.commit() == "5e43a66"
    assert environment.gpu_slug("NVIDIA H200") == "h200"
    assert environment.gpu_slug("NVIDIA H100 80GB HBM3") == "h100"
    assert environment.gpu_slug(None) == "cpu"


def test_tune_records_gbps_tolerance_and_exit_status(capsys):
    from torch_memopt.bench import tune_records

    assert tune_records.gbps({"ours": 2.0, "peer": 4.0}, 8e3) == {"ours": 4.0, "peer": 2.0}
    record = {"rel_err": {"ours": 1e-3, "peer": 2e-2, "nan": float("nan")}}
    assert tune_records.past_tolerance(record, 1e-2) == 2, "a NaN error is past tolerance"
    assert tune_records.finish(2) == 1 and tune_records.finish(0) == 0
    assert capsys.readouterr().out.splitlines() == ["2 outputs past tolerance",
                                                    "all outputs within tolerance"]


def test_tune_records_times_a_norm_case_under_each_switch_setting():
    from torch_memopt.bench import tune_records

    launches = {"rule": {}, "four packs": {"few_rows": 0}}
    rec = tune_records.switched_record("rms_norm", torch.float32, 3, 40, launches, ("eager",),
                                       device="cpu")
    assert set(rec["us"]) == {"rule", "four packs", "eager"} and set(rec["rel_err"]) == set(launches)
    assert all(err < 1e-5 for err in rec["rel_err"].values()), rec["rel_err"]
    assert all(g > 0 for g in rec["gbps"].values())
