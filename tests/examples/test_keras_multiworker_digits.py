"""examples/keras_multiworker_digits.py under `flowmesh run -np 2`: both workers end with the
same loss and the model learns."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from flowmesh.testing.cluster import REPO, child_env


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_two_workers_train_together(tmp_path) -> None:
    backup = tmp_path / "backup"
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "run", "-np", "2", "examples/keras_multiworker_digits.py",
           "--epochs", "3", "--backup_dir", str(backup)]
    done = subprocess.run(cmd, cwd=REPO, env=child_env({"FLOWMESH_COLLECTIVE_TIMEOUT_S": "60"}),
                          capture_output=True, text=True, timeout=220)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    losses = dict(re.findall(r"worker (\d): final training loss (\d+\.\d+)", out))
    assert sorted(losses) == ["0", "1"] and losses["0"] == losses["1"], out[-2000:]
    accuracy = float(re.search(r"test accuracy (\d\.\d+) on 2 workers", out).group(1))
    assert accuracy >= 0.9, out[-2000:]
    assert not backup.exists()
