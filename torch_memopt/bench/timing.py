"""The one timing core of every benchmark in torch_memopt: kernel time, its cross-check,
whole-call latency and the copy ceiling.

Kernel time (the primary figure of every suite but ``e2e``): the median of per-call
CUDA-event times with the L2 flushed before each call, the protocol of
``triton.testing.do_bench``, written here so that it needs no triton: one call timed
alone to size the plan, warm-up calls for ``WARMUP_MS``, then ``rep_ms`` worth of
calls, each after zeroing a ``FLUSH_BYTES`` buffer (256 MiB, over 4x the H200's 60 MB L2),
each between two events. Before each start event the GPU is also given ``host_pad_us`` of
idle spinning (``torch.cuda._sleep``), twice the host time the call takes to enqueue: the
host then always runs ahead of the GPU, and the events time the kernels, not the launcher.
Without it a call whose launcher outran the flush (~75 µs) had its host time in the figure,
and that varied with the host: torch.compile's and Liger's rms_norm at 128 x 4096 read 28.4
and 56.1 µs in one H200 run, 4.8 and 21.1 in the next, ours 6.2 and 5.9 (models suite,
2026-12-04). Calls of ``SLOW_CALL_MS`` or more (the naive GEMM rung at 8192³ runs 2.2 s a
call) get ``MIN_SLOW_REPS``-``MAX_SLOW_REPS`` reps inside ``SLOW_BUDGET_MS`` and no warm-up
beyond the checked call. On the CPU the same plan runs with ``time.perf_counter`` and no
flush (the CPU kernels are references, not targets).

Cross-check: ``torch.utils.benchmark.Timer.blocked_autorange`` over input sets that
rotate through at least ``L2_MULTIPLE`` x the L2 size (``input_set_count``), so no call
finds its inputs cached; back-to-back calls, so host launch cost is in the figure where
it exceeds the kernel's. A ratio that holds under both methods is not a timing artefact.

Latency (``e2e``, the probe, the tensor-parallel example): whole calls between two
events, host work included, what a user sees; several calls compared with each other
are sampled in rotating turns (``interleaved_median_ms``), so a drift of the host's
speed during the run lands on all of them alike: timed one after another, the same
GPT-2 decode step read 6.9 ms and 12.1 ms in two configurations of one run (H200,
2026-11-30), host-bound either way.
"""
from __future__ import annotations

import functools
import itertools
import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch.utils.benchmark import Timer

FLUSH_BYTES = 256 * 1024 * 1024  # triton's own flush size
WARMUP_MS = 25.0
DEFAULT_REP_MS = 100.0
MIN_REPS = 10  # do_bench's 100 ms would give a 40 ms call two samples
MAX_REPS = 1000
SLOW_CALL_MS = 100.0
SLOW_BUDGET_MS = 1000.0
MIN_SLOW_REPS, MAX_SLOW_REPS = 3, 10
L2_MULTIPLE = 2
MAX_INPUT_SETS = 16  # a 4096x1024 fp16 input (8 MiB) needs 15 to cover 2 x 60 MiB
COPY_BYTES = 2 * 1024**3  # the copy ceiling's tensor: 2 GiB, far beyond L2
# torch.cuda._sleep counts clock cycles: 2000 a µs is at or above every clock of the
# H200 (1980 MHz at most), so a pad lasts at least what it is asked for.
SLEEP_CYCLES_PER_US = 2000
BUSY_US = 2000.0  # GPU work queued ahead while a call's enqueue time is measured
# A call that synchronizes inside waits out any pad: its host time is then not a
# launcher's, and padding it more only slows the run.
MAX_PAD_US = 500.0

Call = Callable[[], object]


@dataclass(frozen=True)
class Timing:
    """Per-call times in microseconds, and how they were taken."""

    samples_us: tuple[float, ...]
    method: str

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)


def reps_for(estimate_ms: float, rep_ms: float) -> tuple[int, int]:
    """(warm-up calls, timed calls) for a call that took ``estimate_ms`` once, warm."""
    estimate_ms = max(estimate_ms, 1e-6)
    if estimate_ms >= SLOW_CALL_MS:
        return 0, max(MIN_SLOW_REPS, min(MAX_SLOW_REPS, int(SLOW_BUDGET_MS // estimate_ms)))
    warmup = max(1, min(100, int(WARMUP_MS // estimate_ms)))
    return warmup, max(MIN_REPS, min(MAX_REPS, int(rep_ms // estimate_ms)))


def event_ms(call: Call) -> float:
    """One call between two CUDA events on the current stream, host work included, in ms."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def _host_ms(call: Call) -> float:
    begin = time.perf_counter()
    call()
    return (time.perf_counter() - begin) * 1e3


def _spin(us: float) -> None:
    """Queue ``us`` microseconds (or more) of idle GPU spinning on the current stream."""
    if us > 0:
        torch.cuda._sleep(int(us * SLEEP_CYCLES_PER_US))


def host_pad_us(call: Call) -> float:
    """Twice the host time of enqueueing ``call`` (the least of 3, each behind ``BUSY_US``
    of queued GPU work, so that no launch waits for the GPU), capped at ``MAX_PAD_US``."""
    enqueue_ms = []
    for _ in range(3):
        _spin(BUSY_US)
        enqueue_ms.append(_host_ms(call))
        torch.cuda.synchronize()
    return min(2e3 * min(enqueue_ms), MAX_PAD_US)


FLUSHES = ("write", "deep", "read", "none")
FLUSH_METHODS = {"write": "L2 flushed", "deep": "L2 flushed deep (then zeroed evict_last)",
                 "read": "L2 flushed by a read (left clean)", "none": "L2 not flushed"}


def _deep_flush_op():
    """The flush that evicts lines kept with an evict_last hint (csrc/probe/l2_flush.cu),
    or a ValueError where this build has no CUDA probe ops."""
    import torch_memopt  # noqa: F401  (registers torch.ops.memopt_probe)

    try:
        return torch.ops.memopt_probe.l2_flush_deep
    except (AttributeError, RuntimeError) as exc:
        raise ValueError("KernelTimer: flush='deep' needs torch_memopt built with CUDA "
                         "(torch.ops.memopt_probe.l2_flush_deep)") from exc


class KernelTimer:
    """Times calls on one device by the protocol in the module docstring.

    ``flush``: how the L2 is emptied before each call. ``"write"`` zeroes the buffer,
    as ``triton.testing.do_bench`` does: the L2 is then full of dirty lines, and the
    timed call pays for writing them back as its own reads evict them. A line that a
    kernel loaded with an evict_last hint (torch.compile's norms, Liger's) can outlive
    it: ``"deep"`` zeroes the buffer again after that, with an evict_last policy, which
    ages those kept lines out too (csrc/probe/l2_flush.cu says what they were worth and
    what it leaves behind). ``"read"`` sums
    the buffer instead: the L2 is as cold for the call's inputs, but clean. ``"none"``
    leaves it: the call finds its inputs, and its code, where its last call left them
    (a probe's contrast, not a benchmark figure). ``before``: GPU work queued after each
    flush and before the pad, untimed (a probe's eviction of the SMs' instruction caches).
    ``pad_us``: the pad every call gets at least, whatever its own enqueue time (None:
    each call's own, ``host_pad_us``). The pad is also how long the GPU idles between the
    flush and the call; a call whose launcher is slow (a Python wrapper) idles longer, and
    if the L2 writes its dirty flush lines back meanwhile, finds it cleaner. A common pad
    takes that difference out of a comparison (benchmarks/tune/norm_kernel_trace.py
    measures it).
    """

    def __init__(self, device: torch.device, rep_ms: float = DEFAULT_REP_MS,
                 flush: str = "write", before: Call | None = None, pad_us: float | None = None):
        if flush not in FLUSHES:
            raise ValueError(f"KernelTimer: flush must be one of {FLUSHES}, got {flush!r}")
        if pad_us is not None and not 0 <= pad_us <= MAX_PAD_US:
            raise ValueError(f"KernelTimer: pad_us must be in [0, {MAX_PAD_US:g}], got {pad_us}")
        self.device = torch.device(device)
        # Looked up here: a build without the op fails now, not at the first timed call.
        self._deep = _deep_flush_op() if flush == "deep" and self.device.type == "cuda" else None
        self.rep_ms = rep_ms
        self.flush = flush
        self.before = before
        self.pad_us = pad_us
        self.on_cuda = self.device.type == "cuda"
        self._flush = None

    def _flush_buffer(self) -> torch.Tensor:
        if self._flush is None:
            self._flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=self.device)
        return self._flush

    def empty_l2(self) -> Call:
        """This timer's flush as a call, the one it runs before each timed call (a probe
        that flushes again inside ``before`` takes the same one)."""
        flush = self._flush_buffer()
        return {"write": flush.zero_, "read": flush.sum, "none": lambda: None,
                "deep": lambda: (flush.zero_(), self._deep(flush))}[self.flush]

    def time(self, call: Call) -> Timing:
        if not self.on_cuda:
            return self._time_host(call)
        empty_l2 = self.empty_l2()
        torch.cuda.synchronize(self.device)
        empty_l2()
        estimate = event_ms(call)
        warmup, reps = reps_for(estimate, self.rep_ms)
        for _ in range(warmup):
            call()
        pad_us = host_pad_us(call)
        if self.pad_us is not None:
            pad_us = max(pad_us, self.pad_us)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for start, end in zip(starts, ends):
            empty_l2()
            if self.before is not None:
                self.before()
            _spin(pad_us)
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(self.device)
        samples = tuple(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))
        how = FLUSH_METHODS[self.flush]
        if self.before is not None:
            how += ", then the timer's `before` work"
        return Timing(samples, f"CUDA events, {how}, host ahead by {pad_us:.0f} us, {reps} reps")

    def _time_host(self, call: Call) -> Timing:
        warmup, reps = reps_for(_host_ms(call), self.rep_ms)
        for _ in range(min(warmup, 3)):
            call()
        samples = tuple(_host_ms(call) * 1e3 for _ in range(reps))
        return Timing(samples, f"perf_counter, {reps} reps")


def kernel_ms(call: Call, device: str = "cuda", flush: str = "write") -> float:
    """The median kernel time of ``call`` in ms, by ``KernelTimer``'s protocol (the tuning
    scripts' one-line timer)."""
    return KernelTimer(torch.device(device), flush=flush).time(call).median_us / 1e3


def l2_cache_bytes(device: torch.device) -> int:
    """The L2 size of a CUDA device; 0 on the CPU, where nothing is rotated."""
    device = torch.device(device)
    if device.type != "cuda":
        return 0
    return torch.cuda.get_device_properties(device).L2_cache_size


def input_set_count(set_bytes: int, l2_bytes: int) -> int:
    """How many input sets to rotate so that they total ``L2_MULTIPLE`` x the L2 size:
    two at least (no call follows a call on its own inputs), ``MAX_INPUT_SETS`` at most;
    one where there is no L2 to defeat (the CPU)."""
    if l2_bytes == 0:
        return 1
    needed = math.ceil(L2_MULTIPLE * l2_bytes / max(set_bytes, 1))
    return max(2, min(MAX_INPUT_SETS, needed))


def input_bytes(args: tuple) -> int:
    """Bytes of the tensors in one input set: what a rotation must push out of L2."""
    return sum(arg.nbytes for arg in args if isinstance(arg, torch.Tensor))


def timer_us(fn: Callable, input_sets: Sequence[tuple], min_run_time: float) -> float:
    """The cross-check: ``Timer.blocked_autorange`` median per call of ``fn(*set)`` over
    ``input_sets`` in rotation, in µs. One thread, so CPU figures do not swing with the
    other cores' load (on a busy two-core machine one more OpenMP thread turned a
    0.45 ms softmax into 12.8 ms); ours and the peers get the same."""
    timer = Timer(stmt="fn(*next(input_sets))",
                  globals={"fn": fn, "input_sets": itertools.cycle(input_sets)}, num_threads=1)
    return timer.blocked_autorange(min_run_time=min_run_time).median * 1e6


def sample_ms(call: Call, device: str) -> float:
    """One whole call, host work included, in ms: CUDA events on a GPU, else perf_counter."""
    return event_ms(call) if device == "cuda" else _host_ms(call)


def interleaved_median_ms(calls: dict[str, Call], reps: int, device: str,
                          warmup: int = 3) -> dict[str, float]:
    """Median of ``reps`` whole calls of each of ``calls``, in ms, after ``warmup`` calls
    each, sampled in rotating turns (each call first in its turn of rounds)."""
    names = list(calls)
    for name in names:
        for _ in range(warmup):
            calls[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(sample_ms(calls[name], device))
    return {name: statistics.median(values) for name, values in samples.items()}


def median_ms(call: Call, reps: int, device: str, warmup: int = 3) -> float:
    """Median of ``reps`` whole calls of ``call``, in ms."""
    return interleaved_median_ms({"call": call}, reps, device, warmup)["call"]


def launch_floor_us(device: torch.device, timer: KernelTimer | None = None) -> float | None:
    """An empty kernel's time (``torch.cuda._sleep(0)``) by the kernel timer, in µs: what
    any call costs before it moves a byte (3.6 µs on the H200, 2026-12-04); None on the CPU.
    Beside the copy ceiling it bounds what a latency-bound case can gain over a peer."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    timer = timer or KernelTimer(device)
    return timer.time(lambda: torch.cuda._sleep(0)).median_us


def copy_gbps(device: torch.device, timer: KernelTimer | None = None) -> float | None:
    """The device's copy ceiling: a ``COPY_BYTES`` device-to-device copy, bytes read plus
    bytes written over its kernel time, in GB/s; None on the CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    timer = timer or KernelTimer(device)
    src = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    seconds = timer.time(functools.partial(dst.copy_, src)).median_us * 1e-6
    del src, dst
    torch.cuda.empty_cache()
    return 2 * COPY_BYTES / seconds / 1e9
