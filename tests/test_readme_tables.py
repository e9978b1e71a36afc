"""The README's results section is what benchmarks/readme_tables.py makes of
the committed JSON: no hand-typed figures."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_results_are_generated_from_json():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "readme_tables.py"), "--check"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
