"""MultiWorkerMirroredStrategy with two worker processes described by TF_CONFIG."""

from __future__ import annotations

import os

import pytest

from flowmesh.testing.cluster import run_chief_and_worker

WORKER = os.path.join(os.path.dirname(__file__), "mwms_worker.py")


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_workers_train_in_sync_and_match_the_global_batch():
    results = run_chief_and_worker(WORKER, timeout=150)
    assert sorted(results) == [0, 1]
    chief, worker = results[0], results[1]
    assert chief["size"] == worker["size"] == 2
    assert chief["start"] == worker["start"]  # initial values broadcast from the chief
    assert chief["final"] == worker["final"]  # replicas stayed in sync
    assert chief["losses"] == worker["losses"]  # strategy.reduce combined both workers
    assert chief["losses"][-1] < chief["losses"][0]
    assert chief["reference_diff"] < 1e-5  # equals one process with the global batch
    assert chief["should_checkpoint"] and not worker["should_checkpoint"]
