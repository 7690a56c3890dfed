"""MultiWorkerMirroredStrategy with two worker processes described by TF_CONFIG."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from flowmesh.cli.ports import free_ports

WORKER = os.path.join(os.path.dirname(__file__), "mwms_worker.py")


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_workers_train_in_sync_and_match_the_global_batch():
    chief, worker = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief}"], "worker": [f"127.0.0.1:{worker}"]}
    procs = []
    for task_type in ("chief", "worker"):
        env = dict(os.environ, OMP_NUM_THREADS="1", FLOWMESH_COLLECTIVE_TIMEOUT_S="30",
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": task_type, "index": 0}}))
        procs.append(subprocess.Popen([sys.executable, WORKER], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = {}
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=150)
            assert proc.returncode == 0, err[-3000:]
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    record = json.loads(line[7:])
                    results[record["rank"]] = record
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert sorted(results) == [0, 1]
    chief, worker = results[0], results[1]
    assert chief["size"] == worker["size"] == 2
    assert chief["start"] == worker["start"]  # initial values broadcast from the chief
    assert chief["final"] == worker["final"]  # replicas stayed in sync
    assert chief["losses"] == worker["losses"]  # strategy.reduce combined both workers
    assert chief["losses"][-1] < chief["losses"][0]
    assert chief["reference_diff"] < 1e-5  # equals one process with the global batch
    assert chief["should_checkpoint"] and not worker["should_checkpoint"]
