"""Loading a benchmarks/ script as a module, and running it, for the tests of the
parts of a GPU benchmark that run without a GPU; and the two checks every such
script's tests make (its --help runs; without a GPU it exits 2 and writes nothing)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def load(script: str):
    """benchmarks/<script>.py as a module (benchmarks/ on sys.path for its own imports)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"{script}_script", BENCHMARKS / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    """benchmarks/<script>.py run in a fresh interpreter."""
    return subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), *args],
                          capture_output=True, text=True)


def assert_help_mentions(script: str, *words: str) -> None:
    """``script --help`` runs without a GPU and its text names each of ``words``."""
    result = run(script, "--help")
    assert result.returncode == 0, result.stderr
    for word in words:
        assert word in result.stdout, word


def assert_exits_2_without_a_gpu(script: str, tmp_path: Path, *args: str) -> None:
    """``main([*args, "--out", ...])`` returns 2 on a machine without a GPU and writes no
    results file (callers skip this where a GPU is present)."""
    out = tmp_path / f"{script}.json"
    assert load(script).main([*args, "--out", str(out)]) == 2
    assert not out.exists()
