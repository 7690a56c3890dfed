"""``flowmesh k8s manifest --dry-run``: the manifests' pod commands train locally."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "distributed_mnist.py"


def test_the_pods_commands_train_the_digits():
    out = subprocess.run([sys.executable, "-m", "flowmesh.cli.main", "k8s", "manifest", "--ps", "1",
                          "--workers", "2", "--image", "unused", "--dry-run", "--timeout", "150",
                          "--", "python", str(EXAMPLE), "--steps", "150"],
                         capture_output=True, text=True, timeout=200)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    accuracy = float(re.search(r"accuracy[^0-9]*([0-9.]+)", out.stdout).group(1))
    assert accuracy >= 0.9, out.stdout[-2000:]
    assert "[worker:1]" in out.stdout and "[ps:0]" in out.stdout
