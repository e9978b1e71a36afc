"""Loading a benchmarks/ script as a module, and running it, for the tests of the
parts of a GPU benchmark that run without a GPU."""

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
