"""Acceptance tests of issue 7 for parameter-server training, with real SIGKILLs.

Every test runs ``flowmesh launch ... tests/fault_tolerance/ps_trainer.py`` as users do
(real processes, loopback ports, the launcher's restart policy and warm standby), kills
or freezes one task by pid, and checks what every task recorded (see ``ps_trainer.py``):
which global steps were counted, by whom, when, and what ``MonitoredTrainingSession``
logged while recovering. Each test has a hard timeout, and so does the launcher.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

import flowmesh as tf
from tests.fault_tolerance.harness import LaunchedJob

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]

RPC_DEADLINE_S = 3.0
HEARTBEAT_S = 0.5
# The deadlines the cluster runs with: a hung peer fails a step after HEARTBEAT_S + RPC_DEADLINE_S.
DEADLINES = {"FLOWMESH_HEARTBEAT_S": str(HEARTBEAT_S), "FLOWMESH_RPC_DEADLINE_S": str(RPC_DEADLINE_S),
             "FLOWMESH_CONNECT_TIMEOUT_S": "5"}
# Hard limits: pytest kills a test after TEST_TIMEOUT_S, the launcher stops its tasks after
# LAUNCH_TIMEOUT_S (each test takes ~15-25 s on 2 loaded cores, mostly process start-up).
TEST_TIMEOUT_S = 55
LAUNCH_TIMEOUT_S = 45
RECOVERING = "An error was raised while running a step"
_RESTORED = re.compile(r"Restoring parameters from (\S+)-(\d+)$")
_SAVING = re.compile(r"Saving checkpoints for (\d+) into")


def _final_global_step(job: LaunchedJob) -> int:
    """The largest global step a worker read after its loop: the step only grows, and the
    last worker to finish read it after every increment. (Not the read with the latest
    record time: a worker may write its record after another one's later read.)"""
    done = job.records(kind="done")
    assert done, job.output()
    return max(int(r["global_step"]) for r in done)


def _restored_steps(job: LaunchedJob, task: str, restart: int) -> list[int]:
    return [int(m.group(2)) for r in job.records(task, "log") if r["restart"] == restart
            for m in [_RESTORED.search(r["message"])] if m]


def _restored_global_step(job: LaunchedJob, task: str, restart: int) -> int:
    """The global step value in the checkpoint ``task`` restored last. The file's name
    says the step the saver hook read just before saving; in asynchronous training
    another worker may count a step before the variables are read (as in TensorFlow)."""
    path = [m.group(1) + "-" + m.group(2) for r in job.records(task, "log") if r["restart"] == restart
            for m in [_RESTORED.search(r["message"])] if m][-1]
    return int(tf.train.load_variable(path, "global_step"))


def _saved_steps(job: LaunchedJob, task: str, restart: int) -> list[int]:
    return [int(m.group(1)) for r in job.records(task, "log") if r["restart"] == restart
            for m in [_SAVING.search(r["message"])] if m]


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_killed_worker_restarts_and_rejoins_while_the_others_continue(tmp_path):
    last = 240
    with LaunchedJob(tmp_path, workers=3, max_restarts="1", env=DEADLINES, timeout=LAUNCH_TIMEOUT_S,
                     args=["--steps", str(last), "--sleep", "0.02", "--save_steps", "1000"]) as job:
        # worker:2 itself must be training: on a loaded machine the others can reach 40 steps
        # while it is still starting
        job.wait_for(lambda: job.max_step() >= 40 and job.steps("worker:2"), 60, "40 global steps and worker:2's first")
        killed = job.kill("worker:2")
        rejoined = job.wait_for(lambda: [r for r in job.steps("worker:2") if r["restart"] == 1],
                                40, "a step by the restarted worker:2")[0]
        assert job.finish(LAUNCH_TIMEOUT_S) == 0, job.output()
    out = job.output()
    assert "[launch] worker:2 was killed by SIGKILL; restarting it with the same identity" in out
    # The survivors kept training while worker:2 was down and never had to recover.
    during = [r for r in job.steps() if r["task"] != "worker:2" and killed < r["t"] < rejoined["t"]]
    assert {r["task"] for r in during} == {"worker:0", "worker:1"}, out
    assert not [r for r in job.records(kind="log") if RECOVERING in r["message"] and r["task"] != "worker:2"]
    # The restarted worker kept its identity and trained to the end.
    starts = [(r["restart"], r["pid"]) for r in job.records("worker:2", "start")]
    assert [s[0] for s in starts] == [0, 1] and starts[0][1] != starts[1][1]
    assert len([r for r in job.steps("worker:2") if r["restart"] == 1]) >= 5
    # The final global step is the one requested (async workers may each add one more),
    # and every increment was counted once (the killed worker's in-flight step may have landed).
    final = _final_global_step(job)
    assert last <= final <= last + 2, final
    assert final - len(job.steps()) in (0, 1)


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_killed_ps_is_restored_from_the_last_checkpoint(tmp_path):
    last = 260
    with LaunchedJob(tmp_path, workers=2, max_restarts="1", env=DEADLINES, timeout=LAUNCH_TIMEOUT_S,
                     args=["--steps", str(last), "--sleep", "0.02", "--save_steps", "20",
                           "--max_to_keep", "100"]) as job:
        job.wait_for(lambda: job.max_step() >= 70, 30, "70 global steps")
        job.kill("worker:0", signal.SIGSTOP)  # freeze the chief's saver while we note the checkpoint
        try:
            checkpoint = tf.train.latest_checkpoint(str(job.ckpt))
            killed = job.kill("ps:0")
        finally:
            job.kill("worker:0", signal.SIGCONT)
        assert job.finish(LAUNCH_TIMEOUT_S) == 0, job.output()
    out = job.output()
    assert "[launch] ps:0 was killed by SIGKILL; restarting it with the same identity" in out
    # Every worker saw the loss as UnavailableError within the deadline.
    for task in ("worker:0", "worker:1"):
        seen = [r for r in job.records(task, "log") if RECOVERING in r["message"] and r["t"] > killed]
        assert seen and "UnavailableError" in seen[0]["message"], out
        assert seen[0]["t"] - killed < HEARTBEAT_S + RPC_DEADLINE_S
    # The chief restored the checkpoint that was the latest when the ps died (or one that a
    # save in flight at that moment still completed before the loss was noticed).
    restored = _restored_steps(job, "worker:0", 0)
    before = [r["step"] for r in job.steps() if r["t"] < killed]
    assert checkpoint is not None and restored, out
    assert int(checkpoint.rsplit("-", 1)[1]) <= restored[-1] <= max(before), (checkpoint, restored)
    # Past the restore point each step is counted exactly once: the global step grew by
    # exactly the number of steps the workers completed in their re-created sessions. (The
    # values they read are not unique: as with TensorFlow's variables, another worker's
    # increment may land between a step's increment and the read of its result.)
    restore_point = _restored_global_step(job, "worker:0", 0)
    assert restored[-1] <= restore_point <= max(before), (restored, restore_point)
    after = []
    for task in ("worker:0", "worker:1"):
        resumed = min(r["t"] for r in job.records(task, "session") if r["t"] > killed)
        mine = [r["step"] for r in job.steps(task) if r["t"] > resumed]
        assert mine and mine == sorted(set(mine)), f"{task} counted a global step twice: {mine}"
        after += mine
    assert min(after) > restore_point
    final = _final_global_step(job)
    assert final == restore_point + len(after), (final, restore_point, len(after))
    assert last <= final <= last + 1


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_chief_killed_during_a_checkpoint_write_restores_the_previous_one(tmp_path):
    with LaunchedJob(tmp_path, workers=2, max_restarts="worker=2", env=DEADLINES, timeout=LAUNCH_TIMEOUT_S,
                     args=["--steps", "100000", "--sleep", "0.02", "--save_steps", "20",
                           "--kill_in_save", "3"]) as job:
        # 1. The chief's first incarnation SIGKILLs itself half-way through its 3rd checkpoint.
        job.wait_for(lambda: _restored_steps(job, "worker:0", 1), 40, "the restarted chief's restore")
        saved = _saved_steps(job, "worker:0", 0)
        assert len(saved) == 3, saved  # the 3rd save is the one that died
        assert _restored_steps(job, "worker:0", 1)[-1] == saved[1]
        partial = [n for n in os.listdir(job.ckpt) if n.startswith(f"model.ckpt-{saved[2]}.data-")
                   and ".tmp-" in n]
        assert partial, os.listdir(job.ckpt)  # the half-written file never got its final name
        # 2. Truncate the newest committed checkpoint, then kill the chief again.
        job.wait_for(lambda: len(_saved_steps(job, "worker:0", 1)) >= 2, 30, "two new checkpoints")
        job.kill("worker:0", signal.SIGSTOP)  # no newer checkpoint while we break this one
        latest = tf.train.latest_checkpoint(str(job.ckpt))
        previous = tf.train.get_checkpoint_state(str(job.ckpt)).all_model_checkpoint_paths[-2]
        data = next(p for p in Path(job.ckpt).glob(Path(latest).name + ".data-*") if ".tmp-" not in p.name)
        with open(data, "r+b") as f:
            f.truncate(data.stat().st_size // 2)
        with pytest.raises(tf.errors.DataLossError, match="truncated|corrupt"):
            tf.train.load_checkpoint(latest).get_tensor("w")
        job.kill("worker:0")
        job.wait_for(lambda: [r for r in job.steps("worker:0") if r["restart"] == 2], 40,
                     "a step by the chief restarted a second time")
    messages = [r["message"] for r in job.records("worker:0", "log") if r["restart"] == 2]
    corrupted = [m for m in messages if m.startswith(f"Checkpoint {latest} is corrupted")]
    assert corrupted and "is truncated" in corrupted[0], messages  # the DataLossError's message
    assert _restored_steps(job, "worker:0", 2)[-1] == int(previous.rsplit("-", 1)[1]), messages


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_a_hung_ps_never_hangs_the_job(tmp_path):
    deadline = 2.0
    env = dict(DEADLINES, FLOWMESH_RPC_DEADLINE_S=str(deadline), FLOWMESH_RECOVERY_TIMEOUT_S="2",
               FLOWMESH_CONNECT_TIMEOUT_S="1")
    with LaunchedJob(tmp_path, workers=2, max_restarts="worker=1", env=env, timeout=LAUNCH_TIMEOUT_S,
                     args=["--steps", "100000", "--sleep", "0.02", "--save_steps", "50",
                           "--max_wait", "6"]) as job:
        job.wait_for(lambda: job.max_step() >= 40, 30, "40 global steps")
        ps_pid = job.pid("ps:0")
        frozen = job.kill("ps:0", signal.SIGSTOP)  # alive but silent: no connection is reset
        status = job.finish(LAUNCH_TIMEOUT_S)
        ended = time.time()
    out = job.output()
    assert status != 0, out
    assert re.search(r"worker:\d \S.* after being restarted 1 time \(--max-restarts allows 1 for job "
                     r"'worker'\); stopping every task", out), out
    assert ended - frozen < 25  # ~10 s: detect, give up, restart, give up again, stop all
    for task in ("worker:0", "worker:1"):  # steps waiting on the frozen ps failed in time
        seen = [r for r in job.records(task, "log") if RECOVERING in r["message"] and r["t"] > frozen]
        assert seen and "UnavailableError" in seen[0]["message"], out
        # a ping goes out at the first heartbeat tick of the step and fails RPC_DEADLINE_S
        # later, at the next tick (plus slack for a loaded machine)
        assert seen[0]["t"] - frozen < 2 * HEARTBEAT_S + deadline + 1.5
    with pytest.raises(ProcessLookupError):  # the frozen ps was stopped with the job
        os.kill(ps_pid, 0)
