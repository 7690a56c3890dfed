"""Network faults between hosts, not process deaths: the parameter server's host is cut off
(its packets vanish, nothing is reset) for a while or for good, while two workers on other
hosts train through it with MonitoredTrainingSession (``tests/fault_tolerance/ps_trainer.py``,
each task started by hand with TF_CONFIG)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from flowmesh.testing.hosts import HostBed

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(240)]

PS = "/job:ps/replica:0/task:0"


class PsJob:
    """A ps on h1 and workers on h2 and h3 of ``bed``, logging to ``logs``."""

    def __init__(self, bed: HostBed, workdir: Path, steps: int, env: dict[str, str]):
        self.logs = workdir / "logs"
        self.logs.mkdir()
        cluster = {"ps": [f"{bed.ip('h1')}:2222"],
                   "worker": [f"{bed.ip('h2')}:2222", f"{bed.ip('h3')}:2222"]}
        argv = [sys.executable, "tests/fault_tolerance/ps_trainer.py", "--log_dir", str(self.logs),
                "--checkpoint_dir", str(workdir / "ckpt"), "--steps", str(steps), "--sleep", "0.02"]
        self.tasks = {}
        for host, job, index in (("h1", "ps", 0), ("h2", "worker", 0), ("h3", "worker", 1)):
            config = {"cluster": cluster, "task": {"type": job, "index": index}}
            self.tasks[f"{job}{index}"] = bed.spawn(host, argv, env={"TF_CONFIG": json.dumps(config), **env},
                                                    label=f"{job}{index}")

    def records(self, task: str) -> list[dict[str, Any]]:
        path = self.logs / f"{task}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def wait_for_steps(self, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while sum(r["kind"] == "step" for r in self.records("worker-0")) < count:
            assert time.monotonic() < deadline, self.tasks["worker0"].output()
            time.sleep(0.1)

    def workers(self) -> list:
        return [self.tasks["worker0"], self.tasks["worker1"]]


def test_a_short_partition_heals_without_losing_the_job(host_bed, tmp_path):
    bed = host_bed(3)
    job = PsJob(bed, tmp_path, steps=300, env={})
    job.wait_for_steps(50)
    bed.cut("h1")
    time.sleep(8)  # shorter than the heartbeat deadline (FLOWMESH_RPC_DEADLINE_S, 30 s)
    bed.heal("h1")
    for worker in job.workers():
        assert worker.wait(180) == 0, worker.output()
    assert max(r["global_step"] for w in ("worker-0", "worker-1")
               for r in job.records(w) if r["kind"] == "done") >= 300


def test_a_lasting_partition_is_detected_named_and_recovered_when_the_host_returns(host_bed, tmp_path):
    bed = host_bed(3)
    job = PsJob(bed, tmp_path, steps=300, env={"FLOWMESH_RPC_DEADLINE_S": "6", "FLOWMESH_HEARTBEAT_S": "1"})
    job.wait_for_steps(50)
    bed.cut("h1")
    cut_at = time.time()
    time.sleep(14)  # past the deadline: the steps fail, the sessions are re-created
    bed.heal("h1")
    for worker in job.workers():
        assert worker.wait(180) == 0, worker.output()
    for name in ("worker-0", "worker-1"):
        warned = [r for r in job.records(name) if r["kind"] == "log" and r["level"] == "WARNING"
                  and PS in r["message"] and r["t"] > cut_at]
        assert warned, job.records(name)[-10:]
        assert warned[0]["t"] - cut_at < 6 + 5, warned[0]  # the deadline, and a little slack
        assert "no heartbeat" in warned[0]["message"]
        assert [r for r in job.records(name) if r["kind"] == "done"]


def test_a_host_gone_for_good_fails_the_workers_in_bounded_time(host_bed, tmp_path):
    bed = host_bed(3)
    env = {"FLOWMESH_RPC_DEADLINE_S": "6", "FLOWMESH_HEARTBEAT_S": "1",
           "FLOWMESH_RECOVERY_TIMEOUT_S": "10", "FLOWMESH_CONNECT_TIMEOUT_S": "5"}
    job = PsJob(bed, tmp_path, steps=5000, env=env)
    job.wait_for_steps(50)
    bed.cut("h1")
    cut_at = time.monotonic()
    for worker in job.workers():
        assert worker.wait(120) != 0
        assert "UnavailableError" in worker.output() and PS in worker.output(), worker.output()[-2000:]
    # the deadline (6 s), then recovery gives up after 10 s of failures (one attempt may
    # be under way then: connect timeout 5 s, and the probe of the cause)
    assert time.monotonic() - cut_at < 6 + 10 + 25
