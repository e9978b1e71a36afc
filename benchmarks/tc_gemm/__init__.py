"""The pieces of ``benchmarks/tc_gemm.py``, the tensor-core GEMM acceptance run.

``cases``    the measured shapes, their layouts, acceptance targets and the rungs each runs
``measure``  one case: check every call against a reference, time it, make the records
``backend``  the CUDA side: inputs, the functions timed, do_bench, the Timer, the copy ceiling
``report``   PASS / MISS verdicts and the table printed at the end

``cases``, ``measure`` and ``report`` run on the CPU (tests/test_gemm_tensor_core.py
drives them with a fake backend); only ``backend`` needs a GPU.
"""
