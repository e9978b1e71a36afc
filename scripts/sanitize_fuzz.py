"""The differential fuzzer's CUDA cases under NVIDIA Compute Sanitizer: for each op,
fuzz cases (seed 0, in index order) until CASES of them have run a kernel; the
cases a named rung refuses for its dtype run none and do not count.

    compute-sanitizer --tool memcheck  python scripts/sanitize_fuzz.py 50
    compute-sanitizer --tool racecheck python scripts/sanitize_fuzz.py 20

The caching allocator is off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), so every tensor
ends where its allocation ends and memcheck sees a read one element past it.
Each case is also checked against its float64 reference, as in the fuzzer.
Exit 0 when every case matched, 1 when one did not, 2 without a GPU.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")

import torch  # noqa: E402


def main(argv: list[str]) -> int:
    if not torch.cuda.is_available():
        print("sanitize_fuzz.py needs a CUDA GPU")
        return 2
    import torch_memopt
    from torch_memopt.testing import cases, fuzz

    wanted = int(argv[1]) if len(argv) > 1 else 50
    failed = 0
    for op in torch_memopt.ops.OPS:
        variants = torch_memopt.variants(op, "cuda")
        ran = refused = index = 0
        while ran < wanted:
            case = cases.make_case(op, 0, index, "cuda", variants)
            problem = fuzz.check_case(case, "cuda")
            if problem == "refused":
                refused += 1
            else:
                ran += 1
                if problem is not None:
                    failed += 1
                    print(f"FAIL {op} case {index}: {case.description}: {problem}\n"
                          f"    {fuzz.repro(op, 0, index, 'cuda')}")
            index += 1
        print(f"{op}: {ran} cases ran, {refused} refused by the variant's dtype")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
