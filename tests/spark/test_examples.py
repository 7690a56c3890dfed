"""The Spark examples run end to end, each in a fresh process with its own local Spark."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.multiprocess, pytest.mark.slow]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_tensorflowonspark_program_trains_from_an_rdd():
    out = _run("spark_digits.py", "--input_mode", "spark", "--executors", "3", "--ps", "1")
    accuracy = float(re.search(r"chief accuracy ([0-9.]+)", out).group(1))
    assert accuracy >= 0.85, out  # the example's stated figure (asynchronous training)


def test_parallel_experiments_print_the_best_combination():
    out = _run("spark_experiments.py", "--steps", "100")
    assert len(re.findall(r"accuracy [0-9.]+", out)) == 5  # 4 trials and the best
    assert re.search(r"^best \{'learning_rate': .*'hidden': \d+\}: accuracy 0\.[89]", out, re.M), out
