"""What the built kernels' machine code says, read without a GPU: cuobjdump over the
extension's sm_90a SASS. For tests that hold properties the timings rest on, so that a
change cannot lose them unseen between two runs on the H200:

- the 16-byte-pack kernels read their 16-bit rows in 16-byte loads (``LDG.E.128``), not
  in 2-byte ones (``LDG.E.U16``): read through a selected temporary, a bf16 pack once
  compiled to 8 predicated 2-byte loads, 11744 of them over the norm kernels (2026-12-04);
- the kernels that must not spill have no stack frame (cuobjdump's ``STACK``: spills and
  local arrays; its ``LOCAL`` stays 0 for them);
- a short row's kernel has all its loads in flight before it waits on any
  (``loads_before_first_use``).

Kernel names stay mangled (no c++filt needed); ``template_values`` reads a kernel's
integer and bool template arguments from its mangled name, in order."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Optional

_FUNCTION = re.compile(r"^\s*Function\s*:?\s*(\S+?):?\s*$")
_RESOURCES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
# A literal template argument in a mangled name: L<b|i|j|l|m><value>E (bool, int, ...).
_LITERAL = re.compile(r"L[bijlm](n?\d+)E")


def cuobjdump() -> Optional[str]:
    """A cuobjdump: on PATH, in CUDA_HOME / CUDA_PATH or /usr/local/cuda, or the one
    triton's wheel carries (torch's dependency, so present wherever torch is)."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "bin", "cuobjdump")):
            return os.path.join(root, "bin", "cuobjdump")
    try:
        import triton
    except ImportError:
        return None
    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    return str(bundled) if bundled.is_file() else None


def _run(tool: str, *args: str) -> str:
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout


@lru_cache(maxsize=None)
def resource_usage(binary: str, tool: str) -> dict[str, dict[str, int]]:
    """Each kernel's (mangled name) registers, stack, shared and local bytes."""
    out: dict[str, dict[str, int]] = {}
    name = None
    for line in _run(tool, "-res-usage", binary).splitlines():
        match = _FUNCTION.match(line)
        if match:
            name = match.group(1)
            continue
        match = _RESOURCES.search(line)
        if match and name:
            reg, stack, shared, local = map(int, match.groups())
            out[name] = {"REG": reg, "STACK": stack, "SHARED": shared, "LOCAL": local}
            name = None
    return out


def cubin_of(binary: str, tool: str, source: str, folder: str) -> Optional[str]:
    """The sm_90a cubin that ``source`` (a .cu file's stem, e.g. ``norm_cuda``) compiled to,
    extracted from ``binary`` into ``folder``; None if the binary holds none."""
    listed = re.findall(r"ELF file\s+\d+:\s+(\S+)", _run(tool, "-lelf", binary))
    wanted = [name for name in listed if name.split(".")[0] == source and "sm_90" in name]
    if not wanted:
        return None
    subprocess.run([tool, "-xelf", wanted[0], os.path.abspath(binary)], check=True,
                   capture_output=True, cwd=folder)
    return os.path.join(folder, wanted[0])


@lru_cache(maxsize=None)
def sass(binary: str, tool: str) -> dict[str, str]:
    """The SASS text of every kernel in ``binary`` (a cubin: cubin_of), by mangled name.
    Dumped whole: cuobjdump's per-function selection re-reads the binary each time
    (64 kernels of norm_cuda's cubin: 35 s against 6 s for all 268)."""
    out: dict[str, str] = {}
    for chunk in re.split(r"\n\s*Function : ", _run(tool, "-sass", binary))[1:]:
        name, _, body = chunk.partition("\n")
        out[name.strip()] = body
    return out


def template_values(mangled: str) -> list[int]:
    """The integer and bool template arguments of a kernel, in order (``n`` is minus)."""
    return [int(v.replace("n", "-")) for v in _LITERAL.findall(mangled)]


def first_type_is_16_bit(mangled: str, kernel: str) -> bool:
    """Whether the kernel's first template argument is c10::BFloat16 or c10::Half."""
    args = mangled.split(kernel, 1)[1]
    return args.startswith("IN3c108BFloat16E") or args.startswith("IN3c104HalfE")


def loads(body: str, kind: str) -> int:
    """How many global loads of ``kind`` (``U16``, ``128``, ...) a kernel's SASS holds."""
    return len(re.findall(rf"\bLDG\.E\.{re.escape(kind)}\b", body))


# One SASS instruction: address, optional predicate, opcode, operands.
_INSTRUCTION = re.compile(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_REGISTER = re.compile(r"\bR(\d+)(\.64)?")


def _registers(operand: str) -> set[int]:
    """The general registers an operand names (``R2.64`` in an address: R2 and R3)."""
    out = set()
    for match in _REGISTER.finditer(operand):
        out.add(int(match.group(1)))
        if match.group(2):
            out.add(int(match.group(1)) + 1)
    return out


def loads_before_first_use(body: str, widths: Optional[tuple[str, ...]] = None) -> int:
    """How many global loads (``LDG``) a kernel's SASS issues, in program order, before the
    first instruction that reads a register one of them wrote: the loads in flight together
    when the kernel first waits on memory. In program order, so the loads of a branch not
    taken count too; a lower bound on a path's loads is what a test can ask of it.
    ``widths`` (e.g. ``("128", "64")``): only loads of those widths count, and only their
    registers are watched, so a branch of narrower loads laid out first (the peeled norm
    rows' 2-byte-aligned parameters) does not end the count.

    Where a kernel uses a loaded value before its other loads are issued, each of those
    waits for the first: the early layer_norm instance's parameters, held as packs of 16-bit
    elements, were split into registers right after each load, behind a branch, and the
    1 x 4096 kernel went to memory five times in turn (SASS, sm_90a, 2026-12-05)."""
    pending: set[int] = set()  # registers a load writes that nothing has overwritten since
    count = 0
    for match in _INSTRUCTION.finditer(body):
        opcode, operands = match.group(2), [o.strip() for o in match.group(3).split(",")]
        stores = opcode.startswith(("ST", "RED", "ATOM"))
        sources = operands if stores else operands[1:]
        if any(_registers(operand) & pending for operand in sources):
            return count
        written = set() if stores or not operands else _registers(operands[0])
        counted = widths is None or any(f".{w}" in opcode for w in widths)
        if opcode.split(".")[0] == "LDG" and written and counted:
            width = 4 if ".128" in opcode else 2 if ".64" in opcode else 1
            pending.update(range(min(written), min(written) + width))
            count += 1
        else:
            pending -= written
    return count
