"""benchmarks/tp_llama.py (a Llama-shaped model parallelized with parallelize_module,
memopt through optimize_, issue 19) under torchrun with 2 ranks on the CPU (gloo): both
parallel models, with and without memopt, match the unparallelized one, and optimize_
replaced modules of the parallel model. Hugging Face's LlamaForCausalLM where transformers
is importable, the Llama-shaped blocks otherwise. On GPUs:
torchrun --nproc_per_node=2 benchmarks/tp_llama.py."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import free_port

ROOT = Path(__file__).resolve().parents[1]


def test_two_cpu_ranks_match_the_unparallelized_model():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
         f"--master_port={free_port()}", str(ROOT / "benchmarks" / "tp_llama.py"),
         "--device", "cpu", "--tiny", "--dtype", "float32"],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    errors = re.search(r"stock TP ([0-9.e+-]+), memopt TP ([0-9.e+-]+)", result.stdout)
    assert errors, result.stdout
    assert float(errors.group(1)) < 1e-4 and float(errors.group(2)) < 1e-4, result.stdout
    replaced = re.search(r"optimize_: (\d+) modules replaced", result.stdout)
    assert replaced and int(replaced.group(1)) > 0, result.stdout
