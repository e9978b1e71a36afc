"""The pieces of ``benchmarks/ladder.py``, one job per module.

``rungs``      the ladder's names, the published claims, sizes and the FLOP formula
``timing``     CUDA timing: triton's do_bench, a few-reps event timer, the Timer cross-check
``measure``    one size: check every rung against cuBLAS, time it, make the records
``resources``  registers, shared and local memory per rung from ``cuobjdump``
``ncu``        one child process per rung under Nsight Compute, and its CSV
``console``    the plain-text tables printed at the end of a run
``markdown``   the README sections made from the results JSON

Nothing here imports matplotlib: the H200 image may not have it (``plot_ladder.py``
runs on a workstation).
"""
