"""The seeds' between-graph program started by hand on three hosts, as the seeds start it:
the cluster's own IP addresses, no flowmesh setting, no launcher."""

from __future__ import annotations

import re
import sys

import pytest

from flowmesh.testing.hosts import HostBed

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(180)]


def _start_by_hand(bed: HostBed, *extra: str) -> list:
    ps = f"{bed.ip('h1')}:2222"
    workers = f"{bed.ip('h2')}:2222,{bed.ip('h3')}:2222"
    base = [sys.executable, "examples/distributed_mnist.py", f"--ps_hosts={ps}",
            f"--worker_hosts={workers}", *extra]
    bed.spawn("h1", base + ["--job_name=ps", "--task_index=0"], label="ps")
    return [bed.spawn(host, base + ["--job_name=worker", f"--task_index={i}"], label=f"worker{i}")
            for i, host in enumerate(["h2", "h3"])]


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_seeds_program_trains_across_three_hosts(host_bed, mode):
    bed = host_bed(3)
    workers = _start_by_hand(bed, *(["--sync"] if mode == "sync" else []))
    for worker in workers:
        assert worker.wait(150) == 0, worker.output()
    chief = workers[0].output()
    accuracy = float(re.search(r"test accuracy ([0-9.]+)", chief).group(1))
    assert accuracy >= 0.95, chief
    # each task listened on its listed address and said, once, that it has no secret
    assert chief.count("without a cluster secret") == 1, chief
