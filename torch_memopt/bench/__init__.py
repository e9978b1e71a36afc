"""``python -m torch_memopt.bench [SUITE ...]``: the one benchmark harness of torch_memopt.

Every suite times our kernels against the best stock path (cuBLAS through torch, eager,
torch.compile, Liger-Kernel where importable) in the same process on the same inputs,
checks every output against a float64 reference before timing it, and writes one
record per (case, variant) to ``benchmarks/results/<suite>_<gpu>.json``;
``ratio`` = the fastest peer's time / ours, > 1 meaning ours is faster. The default
suite (``models``) runs every op at the layer shapes of real models.

One job a module:
  timing       the timing core: flushed CUDA-event medians, the Timer cross-check,
               whole-call latency, the copy ceiling
  environment  the run's meta: GPU, driver, versions, commit, date
  calls        what each op is: inputs, ours, stock, float64 reference, FLOP and bytes
  peers        the peers as plug-ins (``@peer``)
  case         a case and its implementations; ``make_case`` for a memopt op
  runner       one case end to end: check, time, records
  record       the record schema, best peer and ratio, geomean and worst
  results      the JSON files
  report       Compare, the records table (console, markdown), summary lines
  plot         the PNG of a results document
  readme       README.md's headline and docs/results.md, generated from the JSON
  progress     the progress bar
  model_zoo    real architectures with random weights (the e2e suite, the tests)
  suites/      one module a suite; ``suites.SUITES`` lists them
  cli          arguments and ``main``
"""
from .cli import main

__all__ = ["main"]
