"""benchmarks/latency.py, the timer of the end-to-end benchmarks, on the CPU
(perf_counter): every call gets its warm-up and its samples, in rotating order, and the
medians come back under each call's name."""

from bench_script import load


def test_interleaved_rotates_the_order_and_times_every_call():
    latency = load("latency")
    order = []
    calls = {name: (lambda name=name: order.append(name)) for name in "abc"}
    times = latency.interleaved_median_ms(calls, 4, "cpu")
    assert set(times) == {"a", "b", "c"} and all(t >= 0 for t in times.values())
    warm, timed = order[:9], order[9:]
    assert warm == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert timed == list("abc" "bca" "cab" "abc")  # each call first in turn


def test_median_of_one_call():
    latency = load("latency")
    count = []
    assert latency.median_ms(lambda: count.append(1), 5, "cpu") >= 0
    assert len(count) == 3 + 5
