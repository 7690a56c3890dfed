"""A job's local processes under supervision: output prefixed per task, restarts with the
same identity, the end of a ps/worker job, and the exit status.

The floor under ``flowmesh launch`` (a local cluster running a script) and
``flowmesh k8s manifest --dry-run`` (the pods of a manifest): each builds its tasks'
:class:`TaskSpec` (command, environment with ``TF_CONFIG``) and hands them to a
:class:`Launcher`, which

* starts every task as a process leading its own group (:mod:`flowmesh.launch.processes`)
  and prefixes each output line with ``[job:index]``, its own lines with ``[launch]``;
* restarts a task that exits with an error or is killed, with the same identity, up to its
  job's budget (:mod:`flowmesh.launch.restart_policy`; ``FLOWMESH_RESTART_COUNT`` tells the
  task how often), from a warm standby interpreter when one is ready
  (``flowmesh.cli.standby``: flowmesh already imported, the task's argv and environment
  arrive on its standard input);
* ends the job when the trainers are done: it waits for an evaluator's last evaluation
  (``EVALUATOR_WAIT_S``) and for ps tasks that exit by themselves (``PS_EXIT_WAIT_S``),
  then stops every task still running; its status is the chief's (the first worker's
  without one), or the evaluator's when it failed after a successful chief.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from flowmesh.launch.processes import ProcessGroup, Supervised, signal_group
from flowmesh.launch.restart_policy import RestartPolicy, RestartTracker, shell_status
from flowmesh.launch.secret import JobSecret

RESTART_COUNT_VAR = "FLOWMESH_RESTART_COUNT"
# How long the launcher waits, after the trainers are done, for an evaluator to finish.
EVALUATOR_WAIT_S = 120.0
# ... and then, in a job with an evaluator, for ps tasks to exit by themselves.
PS_EXIT_WAIT_S = 2.0


@dataclass(frozen=True)
class LaunchOptions:
    """How a :class:`Launcher` supervises.

    Attributes:
        timeout: stop every task after this many seconds (0: never; status 124).
        grace: seconds between SIGTERM and SIGKILL when stopping tasks.
        max_restarts: ``["K"]`` or ``["ps=5,worker=2"]``, as ``--max-restarts`` (None: none).
        standby: keep a warm standby interpreter while restarts are allowed.
    """

    timeout: float = 0.0
    grace: float = 5.0
    max_restarts: list[str] | None = None
    standby: bool = True


@dataclass
class TaskSpec:
    """What starts one task: its identity, command line and environment."""

    job: str
    index: int
    cmd: list[str]
    env: dict[str, str]

    @property
    def name(self) -> str:
        return f"{self.job}:{self.index}"


@dataclass
class Task:
    """One launched task: its current process and how often it was restarted."""

    job: str
    index: int
    proc: subprocess.Popen
    spec: TaskSpec | None = None
    restarts: int = 0
    handled: bool = field(default=False, repr=False)  # this process's exit was acted on

    @property
    def name(self) -> str:
        return f"{self.job}:{self.index}"


def standby_argv(cmd: Sequence[str]) -> list[str] | None:
    """The standby's assignment for ``cmd``: ``[script, args...]`` or ``[-m, module, args...]``;
    None when ``cmd`` is not a plain ``python SCRIPT`` / ``python -m MODULE`` command."""
    if len(cmd) < 2 or cmd[0] != sys.executable:
        return None
    if cmd[1] == "-m" and len(cmd) > 2:
        return list(cmd[1:])
    if cmd[1].endswith(".py") and os.path.isfile(cmd[1]):
        return list(cmd[1:])
    return None


class Launcher:
    """Starts, watches, restarts and stops the tasks of one job; prefixes their output.

    Args:
        cluster: the job's cluster spec (what its tasks' ``TF_CONFIG`` names).
        options: timeout, grace period, restart budget, standby.
        out: where output lines go (default standard output).

    Raises:
        ValueError: a malformed restart budget.
    """

    def __init__(self, cluster: dict[str, list[str]], options: LaunchOptions,
                 out: TextIO | None = None):
        self.options = options
        self.out = out or sys.stdout
        self.cluster = cluster
        self.policy = RestartPolicy.parse(options.max_restarts)
        self.tracker = RestartTracker(self.policy)
        self.tasks: list[Task] = []
        self.group = ProcessGroup(self._line)  # every task's output, prefixed with its name
        self._standby: Supervised | None = None
        self._trainers_done_at: float | None = None
        self._evaluator_done_at: float | None = None
        self.base_env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.base_env.pop("TF_CONFIG", None)
        self.secret = JobSecret.create(self.base_env)  # removed by stop_all()
        self.base_env.update(self.secret.env)

    def start(self, specs: Sequence[TaskSpec]) -> None:
        """Starts the tasks (their environments usually extend :attr:`base_env`, which
        carries the job's secret), and a standby when restarts are allowed."""
        for spec in specs:
            member = self.group.spawn(spec.cmd, spec.env, spec.name)
            self.tasks.append(Task(spec.job, spec.index, member.proc, spec))
        if self.policy.allows_restarts and self.options.standby:
            self._start_standby()

    # --- processes -----------------------------------------------------------------------
    def _line(self, label: str, stream: str, line: str) -> None:
        self.out.write(f"[{label}] {line}\n")
        self.out.flush()

    def _start_standby(self) -> None:
        cmd = [sys.executable, "-m", "flowmesh.cli.standby"]
        self._standby = self.group.spawn(cmd, dict(self.base_env), "standby", stdin=subprocess.PIPE)

    def _take_standby(self, spec: TaskSpec, env: dict[str, str]) -> subprocess.Popen | None:
        """Hands ``spec`` to the warm standby (starting the next one); None if there is none."""
        assignment = standby_argv(spec.cmd)
        if self._standby is None or assignment is None:
            return None
        standby = self._standby
        self._start_standby()  # the next restart gets a warm one too
        proc = standby.proc
        if proc.poll() is not None or proc.stdin is None:
            return None
        standby.label = spec.name
        try:
            proc.stdin.write(json.dumps({"argv": assignment, "env": env}) + "\n")
            proc.stdin.close()
        except OSError:
            standby.signal(signal.SIGKILL)
            return None
        return proc

    def _restart(self, task: Task) -> None:
        """Starts ``task`` again with the same identity (a standby when one is warm)."""
        assert task.spec is not None
        signal_group(task.proc, signal.SIGKILL)  # leftovers of the failed process's group
        task.restarts += 1
        env = dict(task.spec.env, **{RESTART_COUNT_VAR: str(task.restarts)})
        proc = self._take_standby(task.spec, env)
        how = "warm standby"
        if proc is None:
            proc, how = self.group.spawn(task.spec.cmd, env, task.name).proc, "new process"
        task.proc, task.handled = proc, False
        self.say(f"{task.name} restarted (pid {proc.pid}, {how})")

    def say(self, message: str) -> None:
        with self.group.lock:
            self._line("launch", "stdout", message)

    @property
    def leader(self) -> Task:
        return next(t for t in self.tasks if t.job in ("chief", "worker"))

    # --- watching ------------------------------------------------------------------------
    def wait(self) -> int:
        """Waits for the trainers (restarting failed tasks by policy); returns the exit status."""
        deadline = time.monotonic() + self.options.timeout if self.options.timeout > 0 else None
        while True:
            status = self._check_tasks()
            if status is not None:
                return status
            if deadline is not None and time.monotonic() > deadline:
                self.say(f"timed out after {self.options.timeout:g} s; stopping every task")
                return 124
            time.sleep(0.05)

    def _check_tasks(self) -> int | None:
        """Acts on every task that exited since the last check; the job's status once it is over."""
        for task in self.tasks:
            code = task.proc.poll()
            if code is None or task.handled:
                continue
            task.handled = True
            decision = self.tracker.decide(task.job, task.name, code)
            if decision.action == "restart":
                self.say(decision.message)
                self._restart(task)
            elif decision.action == "fail":
                self.say(decision.message)
                return shell_status(code)
            else:
                self.say(decision.message)
                if task is self.leader and code != 0:
                    self.say(f"{task.name} failed; stopping the other tasks")
                    return code
        trainers = [t for t in self.tasks if t.job in ("chief", "worker")]
        if all(t.handled for t in trainers):
            return self._after_training()
        return None

    def _after_training(self) -> int | None:
        """Once the trainers are done: the leader's status, after waiting (up to
        EVALUATOR_WAIT_S) for an evaluator still evaluating the last checkpoint and then (up
        to PS_EXIT_WAIT_S) for ps tasks to exit; a failed evaluator's status when the leader
        succeeded. Tasks still running afterwards are stopped."""
        leader = self.leader.proc.returncode
        evaluators = [t for t in self.tasks if t.job == "evaluator"]
        if self._trainers_done_at is None:
            self._trainers_done_at = time.monotonic()
        waited = time.monotonic() - self._trainers_done_at
        running = [t for t in evaluators if t.proc.poll() is None]
        if leader == 0 and running and waited < EVALUATOR_WAIT_S:
            return None
        if leader == 0 and evaluators and not running:
            # train_and_evaluate's ps tasks exit by themselves: a moment to let them.
            if self._evaluator_done_at is None:
                self._evaluator_done_at = time.monotonic()
            ps_running = any(t.job == "ps" and t.proc.poll() is None for t in self.tasks)
            if ps_running and time.monotonic() - self._evaluator_done_at < PS_EXIT_WAIT_S:
                return None
        elif leader == 0 and not evaluators and waited < PS_EXIT_WAIT_S and self._ps_leaving():
            return None
        failed = [t.proc.returncode for t in evaluators if t.proc.returncode not in (None, 0)]
        return failed[0] if leader == 0 and failed else leader

    def _ps_leaving(self) -> bool:
        """True while a ps task that stopped serving (its port refuses connections, as
        a ParameterServerStrategy ps does once every trainer finished) is still exiting."""
        import socket

        for task in self.tasks:
            if task.job != "ps" or task.proc.poll() is not None:
                continue
            host, _, port = self.cluster["ps"][task.index].rpartition(":")
            try:
                socket.create_connection((host.strip("[]"), int(port)), timeout=0.5).close()
            except OSError:
                return True
        return False

    def stop_all(self) -> None:
        """SIGTERM every live task (its whole process group), SIGKILL after the grace period."""
        if self._standby is not None and self._standby.proc.stdin is not None:
            try:
                self._standby.proc.stdin.close()  # end of input: an idle standby exits by itself
            except OSError:
                pass
        self._standby = None
        self.group.stop(self.options.grace)
        self.secret.remove()
