"""The all-reduce and scaling benchmarks still run (tiny settings, 2 ranks); their speed is
measured elsewhere, never here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]


def _run(module: str, *args: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                         timeout=240, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


@pytest.mark.timeout(300)
def test_allreduce_benchmark_runs_on_one_size():
    records = _run("benchmarks.allreduce", "--repeats", "1", "--sizes", "4KB")
    assert [(r["bench"], r["peer"]) for r in records] == [
        ("allreduce_busbw", "flowmesh_donated"), ("allreduce_busbw", "flowmesh_graph"),
        ("allreduce_busbw", "gloo"), ("allreduce_busbw_in_place", "gloo"),
        ("allreduce_fusion", "one_each")]
    assert all(r["flowmesh"] > 0 and r["ratio"] > 0 for r in records)


@pytest.mark.timeout(300)
def test_scaling_benchmark_runs_the_mlp_against_ddp():
    records = _run("benchmarks.scaling", "--repeats", "1", "--models", "mlp", "--peers", "torch_ddp")
    assert len(records) == 1 and records[0]["peer"] == "torch_ddp"
    assert 0 < records[0]["flowmesh"] and 0 < records[0]["peer_value"]
