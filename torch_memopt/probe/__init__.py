"""The memory hierarchy of this GPU, measured (issue 7): ``python -m torch_memopt.probe``.

Probe kernels live in csrc/probe/ (the ``torch.ops.memopt_probe`` namespace of the same
extension); ``hierarchy`` runs probes 1-3 (latency, shared memory, global memory),
``mistakes`` probes 4-8 (AoS/SoA, constant memory, local memory, occupancy, unified
memory); each compares what it measured with the source's claim (``claims``)."""
