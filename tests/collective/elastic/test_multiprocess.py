"""Elastic all-reduce acceptance: real processes started by ``flowmesh run --min-np ...``,
loopback gloo, real SIGKILLs, hard timeouts.

* 3 ranks train; one is killed mid-training; the other 2 roll back to the last commit,
  re-form the group and continue; then a new rank joins (``flowmesh run --join``); every
  rank ends with identical weights, equal to single-process training on the same global
  batches without any failure;
* a second loss below ``--min-np`` fails the job quickly with a clear error;
* ``--restart-failed`` replaces a lost rank 0 (the survivor, now rank 0, holds the
  state), and the replacement joins at the next commit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.collective.elastic import worker

ROOT = Path(__file__).resolve().parents[3]
WORKER = str(Path(worker.__file__).resolve())
CLI = [sys.executable, "-m", "flowmesh.cli.main", "run"]
ENV = {"FLOWMESH_COLLECTIVE_TIMEOUT_S": "10", "FLOWMESH_ELASTIC_TIMEOUT_S": "30",
       "OMP_NUM_THREADS": "1"}

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]


class Launch:
    """A ``flowmesh run`` subprocess whose output lines are collected as they come."""

    def __init__(self, args: list[str], extra_env: dict[str, str] | None = None):
        env = dict(os.environ, **ENV, PYTHONPATH=str(ROOT), **(extra_env or {}))
        self.proc = subprocess.Popen(CLI + args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._pumps = [threading.Thread(target=self._pump, args=(s,), daemon=True)
                       for s in (self.proc.stdout, self.proc.stderr)]
        for pump in self._pumps:
            pump.start()

    def _pump(self, stream) -> None:
        for line in stream:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for line in self.lines:
                    match = re.search(pattern, line)
                    if match:
                        return match
            if self.proc.poll() is not None and time.monotonic() > deadline - timeout + 1:
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r}:\n" + "\n".join(self.lines[-60:]))

    def finish(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()  # our own child, by pid
                self.proc.wait(5)
        for pump in self._pumps:
            pump.join(5)
        return code

    def text(self) -> str:
        return "\n".join(self.lines)


def final_state(out: Path, member: str) -> tuple[dict, list[np.ndarray]]:
    with open(out / f"member_{member}.json") as f:
        info = json.load(f)
    data = np.load(out / f"member_{member}.npz")
    return info, [data[f"arr_{i}"] for i in range(len(data.files))]


def max_diff(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b))


def sizes_by_step(text: str, rank_prefix: str) -> dict[int, int]:
    found = re.findall(rf"^\[{rank_prefix}\] PROGRESS step (\d+) rank \d+ size (\d+)$", text, re.M)
    return {int(step): int(size) for step, size in found}  # the last run of each step wins


@pytest.mark.timeout(150)
def test_lost_rank_survivors_continue_then_a_new_rank_joins(tmp_path):
    steps = 40
    args = ["--steps", str(steps), "--kill", "2:13", "--hold-step", "25", "--hold-size", "3",
            "--out", str(tmp_path)]
    job = Launch(["--min-np", "2", "--max-np", "3", "-np", "3", "--timeout", "120", WORKER, *args])
    hint = job.wait_for(r"FLOWMESH_CLUSTER_SECRET_FILE=(\S+) flowmesh run --join "
                        r"(127\.0\.0\.1:\d+)", 30)
    secret, address = hint.group(1), hint.group(2)
    job.wait_for(r"^\[0\] PROGRESS step 25 rank 0 size 2$", 90)
    # the joiner needs the job's secret to reach the rendezvous store (the hint says so)
    joiner = Launch(["--join", address, "-np", "1", "--timeout", "90", WORKER, *args],
                    {"FLOWMESH_CLUSTER_SECRET_FILE": secret})
    assert joiner.finish(100) == 0, joiner.text()
    assert job.finish(100) == 0, job.text()
    log = job.text()

    # the loss was seen and reported, by the launcher and by the survivors
    assert re.search(r"member 2 \(pid \d+\) was killed by SIGKILL \(status -9\); 2 rank\(s\) remain", log)
    assert "round 1: 2 rank(s), members ['0', '1']; lost 2 (was killed by SIGKILL (status -9))" in log
    assert "round 2: 3 rank(s), members ['0', '1', '3']" in log
    for rank in (0, 1):
        assert re.search(rf"^\[{rank}\] \[flowmesh elastic\] member {rank} \(rank {rank} of 3\): "
                         r"re-forming the group: UnavailableError: .*lost ranks \[2\]", log, re.M)
    # 2 ranks trained after the loss (rolled back to the commit at step 10), 3 after the join
    progress = sizes_by_step(log, "0")
    assert [progress[s] for s in (11, 13, 20, 25)] == [2, 2, 2, 2]
    assert [progress[s] for s in (26, 40)] == [3, 3]
    assert re.search(r"^\[0\] PROGRESS step 12 rank 0 size 3$", log, re.M)  # before the loss

    finals = {m: final_state(tmp_path, m) for m in ("0", "1", "3")}
    assert {m: (i["rank"], i["size"], i["step"]) for m, (i, _) in finals.items()} == {
        "0": (0, 3, steps), "1": (1, 3, steps), "3": (2, 3, steps)}
    assert [e["new"] for e in finals["0"][0]["resets"]] == [[0, 2], [0, 3]]
    assert finals["0"][0]["reset_sizes"] == [2, 3] and finals["3"][0]["resets"] == []
    assert not (tmp_path / "member_2.npz").exists()
    weights = [w for _, w in finals.values()]
    assert max_diff(weights[0], weights[1]) == 0.0 and max_diff(weights[0], weights[2]) == 0.0
    reference = worker.reference(steps, 12, 0)
    assert max_diff(weights[0], reference) < 1e-5


@pytest.mark.timeout(120)
def test_a_second_loss_below_min_np_fails_cleanly(tmp_path):
    start = time.monotonic()
    job = Launch(["--min-np", "2", "--max-np", "3", "-np", "3", "--timeout", "100",
                  "--failure-grace", "10", WORKER, "--steps", "200", "--kill", "1:8",
                  "--kill", "2:14", "--out", str(tmp_path)])
    code = job.finish(110)
    log = job.text()
    assert code != 0 and code != 124, log
    assert time.monotonic() - start < 60
    assert "round 1: 2 rank(s), members ['0', '2']; lost 1 (was killed by SIGKILL (status -9))" in log
    assert "stopping the job: only 1 rank(s) left, below --min-np 2" in log
    # the survivor itself stops with the reason, not a hang or a bare timeout
    assert re.search(r"^\[0\] .*UnavailableError: Elastic member 0 \(round 2\): .*below --min-np 2",
                     log, re.M), log
    assert not list(tmp_path.glob("member_*.npz"))


@pytest.mark.timeout(120)
def test_restart_failed_replaces_a_lost_rank_0(tmp_path):
    steps = 30
    job = Launch(["--min-np", "1", "--max-np", "2", "-np", "2", "--restart-failed",
                  "--timeout", "100", WORKER, "--steps", str(steps), "--kill", "0:8",
                  "--hold-step", "15", "--hold-size", "2", "--out", str(tmp_path)])
    assert job.finish(110) == 0, job.text()
    log = job.text()
    assert "started member 2 to replace member 0 (restart 1 of 3)" in log
    assert "round 1: 1 rank(s), members ['1']; lost 0 (was killed by SIGKILL (status -9))" in log
    assert "round 2: 2 rank(s), members ['1', '2']" in log
    assert sizes_by_step(log, "1")[12] == 1  # member 1 (now rank 0) alone, then two again
    (info1, w1), (info2, w2) = final_state(tmp_path, "1"), final_state(tmp_path, "2")
    assert (info1["rank"], info1["size"], info1["step"]) == (0, 2, steps)
    assert (info2["rank"], info2["step"]) == (1, steps)
    assert max_diff(w1, w2) == 0.0
    assert max_diff(w1, worker.reference(steps, 12, 0)) < 1e-5
