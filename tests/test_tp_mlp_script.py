"""benchmarks/tp_mlp.py (a tensor-parallel MLP on memopt's linear, issue 6) under
torchrun with 2 ranks on the CPU (gloo): the sharded output matches the unsharded one.
On a machine of two GPUs it runs with NCCL: torchrun --nproc_per_node=2 benchmarks/tp_mlp.py."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_two_cpu_ranks_match_the_single_device_mlp():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=29531",
         str(ROOT / "benchmarks" / "tp_mlp.py"), "--device", "cpu", "--tokens", "32",
         "--width", "64", "--reps", "1"],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "outputs match" in result.stdout
