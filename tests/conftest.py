"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import os

import pytest

# The suite runs many processes on few cores (clusters, ranks, Spark and Ray tasks): their
# OpenMP threads sleep when idle instead of spinning against each other. flowmesh itself
# decides at import (AUTO, flowmesh/runtime/threading_policy.py); the suite does not wait
# for the load average to notice. Set before flowmesh (and torch) load; children inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import flowmesh as tf  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()



def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 - pytest's reporter
    """Names the CPU and the kernel code paths (also under -q), so a failure on another
    machine can be read against the one it passed on."""
    import platform

    import torch

    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                          if line.startswith("model name")), model)
    except OSError:
        pass
    terminalreporter.write_line(
        f"cpu: {model} ({os.cpu_count()} logical, {platform.machine()}); torch "
        f"{torch.__version__}, kernel capability {torch.backends.cpu.get_cpu_capability()}")
