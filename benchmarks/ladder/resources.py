"""Registers, shared memory and local memory per rung, read from the built extension
with ``cuobjdump --dump-resource-usage``.

cuobjdump prints, per embedded cubin (one per source file and arch)::

    arch = sm_90a
    identifier = /path/csrc/gemm/ladder_simple.cu
    Resource usage:
     Function _ZN6memopt22gemm_smem_tiled_kernelILi1ELb0EEEvNS_8GemmArgsE:
      REG:38 STACK:0 SHARED:8448 LOCAL:0 CONSTANT[0]:... TEXTURE:0 ...

REG is registers per thread, SHARED the static shared memory per block in bytes
(dynamic shared memory is a launch argument: ncu's launch__shared_mem_per_block_dynamic
reports it), LOCAL the local memory per thread in bytes (register spills and local
arrays), STACK the per-thread call stack. A kernel ``gemm_<rung>_kernel`` belongs to
rung ``<rung>``; ``gemm_smem_tiled_kernel`` serves two rungs, told apart by its first
integer template argument, the row padding (0: ``smem_tiled``, else ``smem_padded``).
Where an ncu pass recorded the mangled name each rung launched, that name decides.
Only fp32 instantiations are kept (no Half / BFloat16 in the name).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")
FUNCTION = re.compile(r"^\s*Function\s+(\S+?):\s*(.*)$")
HALF_TYPES = re.compile(r"Half|BFloat16|__half|__nv_bfloat16|bfloat16_t")
KERNEL_BASE = re.compile(r"gemm_(\w+?)_kernel")
INTEGER = re.compile(r"^(?:\([^()]*\))?(-?\d+)[uUlL]*$")  # 1, 1u, 2l, (ns::Mode)2


def find_cuobjdump() -> str | None:
    """cuobjdump on PATH, under CUDA_HOME / CUDA_PATH, /usr/local/cuda, or triton's copy."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.submodule_search_locations:
        roots.append(str(Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia"))
    for root in filter(None, roots):
        candidate = Path(root) / "bin" / "cuobjdump"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def extension_path() -> str:
    """The built ``torch_memopt._C`` shared library."""
    spec = importlib.util.find_spec("torch_memopt._C")
    if spec is None or spec.origin is None:
        raise RuntimeError("torch_memopt._C is not built")
    return spec.origin


def parse_resource_usage(text: str) -> list[dict]:
    """Every ``Function`` entry of ``cuobjdump --dump-resource-usage`` output, with its
    cubin's arch and source identifier and its fields as integers."""
    functions, arch, identifier, pending = [], None, None, None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("arch ="):
            arch = stripped.split("=", 1)[1].strip()
        elif stripped.startswith("identifier ="):
            identifier = stripped.split("=", 1)[1].strip()
        elif (match := FUNCTION.match(line)) is not None:
            pending = {"mangled": match.group(1), "arch": arch, "identifier": identifier}
            if FIELD.search(match.group(2)):
                functions.append({**pending, **_fields(match.group(2))})
                pending = None
        elif pending is not None and FIELD.search(stripped):
            functions.append({**pending, **_fields(stripped)})
            pending = None
    return functions


def _fields(text: str) -> dict:
    fields = dict((key, int(value)) for key, value in FIELD.findall(text))
    return {
        "registers": fields.get("REG"),
        "stack": fields.get("STACK"),
        "shared_static": fields.get("SHARED"),
        "local": fields.get("LOCAL"),
        "fields": fields,
    }


def demangle(names: list[str]) -> list[str]:
    """c++filt over ``names`` in one process; the names unchanged if it is missing."""
    tool = shutil.which("c++filt")
    if tool is None or not names:
        return list(names)
    result = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True)
    lines = result.stdout.splitlines()
    return lines if result.returncode == 0 and len(lines) == len(names) else list(names)


def template_arguments(demangled: str) -> list[str]:
    """The top-level template arguments of the function's name, ``[]`` for none."""
    opening = re.search(r"[<(]", demangled)
    if opening is None or opening.group() != "<":
        return []
    args, depth, current = [], 0, ""
    for char in demangled[opening.end():]:
        if char in "<(":
            depth += 1
        elif char in ">)":
            if depth == 0:
                break
            depth -= 1
        if char == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        args.append(current.strip())
    return args


def padding_argument(arguments: list[str]) -> int | None:
    """The first integer (not bool, not type) template argument."""
    for argument in arguments:
        match = INTEGER.match(argument)
        if match is not None:
            return int(match.group(1))
    return None


def rung_of(mangled: str, demangled: str) -> str | None:
    """The ladder rung a kernel implements, from its name; None for other kernels."""
    name = re.split(r"[<(]", demangled, maxsplit=1)[0]
    match = KERNEL_BASE.search(name) or KERNEL_BASE.search(mangled)
    if match is None:
        return None
    rung = match.group(1)
    if rung == "smem_tiled" and padding_argument(template_arguments(demangled)) not in (None, 0):
        return "smem_padded"
    return rung


def ladder_kernels(functions: list[dict], launched: dict[str, list[str]] | None = None) -> list[dict]:
    """The fp32 GEMM-ladder kernels among ``functions``, each with its rung, demangled
    name and template arguments; ``launched`` (rung -> mangled names, from ncu) marks
    and, where it disagrees with the name rule, maps the kernels a run really used."""
    launched = launched or {}
    launched_rung = {name: rung for rung, names in launched.items() for name in names}
    fp32 = [f for f in functions if not HALF_TYPES.search(f["mangled"])]
    names = demangle([f["mangled"] for f in fp32])
    kernels = []
    for function, demangled in zip(fp32, names):
        rung = launched_rung.get(function["mangled"]) or rung_of(function["mangled"], demangled)
        if rung is None:
            continue
        kernels.append({
            "rung": rung,
            "demangled": demangled,
            "template_args": template_arguments(demangled),
            "launched": function["mangled"] in launched_rung,
            **function,
        })
    return kernels


def choose_arch(kernels: list[dict], capability: tuple[int, int] | None) -> str | None:
    """The device's own arch (``sm_90a`` before ``sm_90``) where present, else the highest."""
    archs = sorted({k["arch"] for k in kernels if k["arch"]}, key=_arch_number)
    if not archs:
        return None
    if capability is not None:
        own = f"sm_{capability[0]}{capability[1]}"
        for candidate in (own + "a", own):
            if candidate in archs:
                return candidate
    return archs[-1]


def _arch_number(arch: str) -> tuple[int, str]:
    digits = re.search(r"\d+", arch)
    return (int(digits.group()) if digits else 0, arch)


def collect(
    binary: str,
    cuobjdump: str,
    *,
    capability: tuple[int, int] | None,
    launched: dict[str, list[str]] | None = None,
) -> dict:
    """The ``resources`` section of the results JSON."""
    result = subprocess.run(
        [cuobjdump, "--dump-resource-usage", binary], capture_output=True, text=True, timeout=120
    )
    if result.returncode != 0:
        raise RuntimeError(f"{cuobjdump} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    kernels = ladder_kernels(parse_resource_usage(result.stdout), launched)
    for kernel in kernels:  # a build-machine path says nothing: keep it from csrc/ on
        identifier = kernel["identifier"] or ""
        kernel["identifier"] = ("csrc/" + identifier.split("/csrc/", 1)[1]
                                if "/csrc/" in identifier else Path(identifier).name)
    return {
        "source": "cuobjdump --dump-resource-usage",
        "binary": Path(binary).name,
        "arch": choose_arch(kernels, capability),
        "archs": sorted({k["arch"] for k in kernels if k["arch"]}, key=_arch_number),
        "kernels": kernels,
    }


def spill_warnings(section: dict, rungs: tuple[str, ...]) -> list[str]:
    """One line per kernel of ``rungs`` (at the chosen arch) that uses local memory or stack."""
    return [
        f"{k['rung']} {k['demangled'].split('(')[0]}: LOCAL {k['local']} B, STACK {k['stack']} B"
        for k in section["kernels"]
        if k["rung"] in rungs and k["arch"] == section["arch"] and (k["local"] or k["stack"])
    ]
