"""The pieces of ``benchmarks/norm_bench.py``, the norm and softmax bandwidth run.

``cases``    the measured shapes, the bytes each call moves, targets, the calls planned
``calls``    what each call runs on the shared inputs: ours, the peers, the reference
``measure``  one case: check every call against float64, time it, make the records
``backend``  the CUDA side: inputs on the GPU, the timers and the copy ceiling
``report``   the tables printed at the end and the PASS / MISS tally
``results``  the JSON document written to ``--out``

Timing, the copy ceiling, ``Target``, relative error and the table helpers come from
``tc_gemm`` and ``ladder``. Everything but ``backend`` runs on the CPU
(tests/test_norm_bench_script.py drives it with a fake backend).
"""
