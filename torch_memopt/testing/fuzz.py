"""The seeded differential fuzzer: random cases of every op (cases.py) through
torch_memopt, each against its float64 reference (references.py).

    python -m torch_memopt.testing.fuzz --cases 200 --seed 0 [--device cpu|cuda] [--op OP ...]
    python -m torch_memopt.testing.fuzz --op linear --seed 0 --case 17   # one case again

A case passes when the output matches the reference, or when a named variant other
than auto refuses the case's dtype with a TypeError that lists the variants that take
it (a rung of the fp32 ladder given float16, say). Anything else fails, and is printed with its seed,
its index and the command that runs it alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import torch

import torch_memopt
from torch_memopt.bench.calls import matmul_tf32

from . import cases, references


@dataclasses.dataclass
class FuzzReport:
    device: str
    seed: int
    counts: dict = dataclasses.field(default_factory=dict)    # op -> cases run
    refused: dict = dataclasses.field(default_factory=dict)   # op -> dtype refusals
    failures: list = dataclasses.field(default_factory=list)  # one line each
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = []
        for op, n in self.counts.items():
            failed = sum(1 for f in self.failures if f.startswith(f"{op} "))
            out.append(f"fuzz {self.device} {op}: {n} cases, {failed} failed, "
                       f"{self.refused.get(op, 0)} refused by the variant's dtype")
        out.append(f"fuzz {self.device}: {sum(self.counts.values())} cases, {len(self.failures)} "
                   f"failed, seed {self.seed}, {self.seconds:.1f} s")
        return out


def repro(op: str, seed: int, index: int, device: str) -> str:
    return f"python -m torch_memopt.testing.fuzz --device {device} --op {op} --seed {seed} --case {index}"


def names_the_variants(message: str) -> bool:
    """Whether a dtype refusal lists what to use instead: "variants for float16: auto,
    ..." (the GEMM ladders) or "valid variants: auto, ..."."""
    return ("variants for " in message or "valid variants" in message) and "auto" in message


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-for-bit the same values, NaN where the other is NaN (NaN != NaN to ==)."""
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())


def _outputs(result):
    """An op's outputs as a tuple; the add + norms also return the sum."""
    return result if isinstance(result, tuple) else (result,)


def check_case(case: cases.Case, device: str) -> str | None:
    """None when the case passes (or its variant refuses its dtype as it should);
    otherwise what went wrong."""
    variant = case.kwargs.get("variant", "auto")
    try:
        with matmul_tf32(case.tf32):
            got = getattr(torch_memopt, case.op)(*case.args, **case.kwargs)
    except TypeError as e:
        if variant != "auto" and names_the_variants(str(e)):
            return "refused"
        return f"raised {type(e).__name__}: {e}"
    except Exception as e:  # a crash of the op, not of the fuzzer: report it
        return f"raised {type(e).__name__}: {e}"
    if device == "cuda":
        torch.cuda.synchronize()
    ref = references.REFERENCES[case.op](*case.args, **{k: v for k, v in case.kwargs.items()
                                                        if k != "variant"})
    got, ref = _outputs(got), _outputs(ref)
    dtype = got[0].dtype
    expected_dtype = case.args[2] if case.op == "softmax" and case.args[2] is not None \
        else case.args[0].dtype
    if dtype != expected_dtype:
        return f"output dtype {dtype}, expected {expected_dtype}"
    # The wgmma_tf32 rung rounds to tf32 by its name, with the flag or without it.
    tf32 = case.tf32 or variant.endswith("_tf32")
    tol = references.tolerance(case.op, dtype, case.reduction, tf32)
    problem = references.compare(got[0], ref[0], tol)
    if problem is None and len(got) > 1 and not same_values(got[1].cpu(), ref[1]):
        problem = "the sum differs from input + residual"
    if problem is None and not all(g.is_contiguous() for g in got):
        problem = "an output is not contiguous"
    return problem


def run_fuzz(cases_per_op: int = 200, seed: int = 0, device: str = "cpu", ops=None,
             only_case: int | None = None, log=print) -> FuzzReport:
    """Runs cases_per_op cases of each op (or case `only_case` alone) and reports."""
    report = FuzzReport(device, seed)
    start = time.perf_counter()
    for op in ops or torch_memopt.ops.OPS:
        variants = torch_memopt.variants(op, device)
        indices = [only_case] if only_case is not None else range(cases_per_op)
        report.counts[op] = 0
        for index in indices:
            case = cases.make_case(op, seed, index, device, variants)
            problem = check_case(case, device)
            report.counts[op] += 1
            if problem == "refused":
                report.refused[op] = report.refused.get(op, 0) + 1
            elif problem is not None:
                line = f"{op} case {index}: {case.description}: {problem}\n    {repro(op, seed, index, device)}"
                report.failures.append(line)
                log(f"FAIL {line}")
        # One line an op as it finishes, so a run cut short by a time limit
        # still says how far each op got.
        log(f"done {op}: {report.counts[op]} cases, {time.perf_counter() - start:.0f} s so far")
    report.seconds = time.perf_counter() - start
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_memopt.testing.fuzz",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200, help="cases an op (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--op", action="append", choices=torch_memopt.ops.OPS,
                        help="only these ops (default: all)")
    parser.add_argument("--case", type=int, default=None, help="run this one case index")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")
    report = run_fuzz(args.cases, args.seed, args.device, args.op, args.case)
    print("\n".join(report.lines()))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
