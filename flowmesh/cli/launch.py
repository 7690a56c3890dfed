"""Starts a local cluster: one process per task running SCRIPT, with TF_CONFIG per task.

Examples::

    flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py --sync
    flowmesh launch --ps 1 --workers 2 --chief --evaluator train.py --steps 100
    flowmesh launch --ps 1 --workers 3 --max-restarts 3 train.py --checkpoint_dir /shared/run

Every task gets free loopback ports and ``TF_CONFIG`` (cluster + its own task). Scripts
written for the classic flags also get ``--ps_hosts --worker_hosts --job_name
--task_index`` (``--flags auto`` passes them when the script mentions ``ps_hosts``,
``worker_hosts`` or ``job_name``). Each line a task prints is prefixed with
``[job:index]``; the launcher's own lines (``[launch] pids worker:0=123 ...``, exits,
restarts with the new pid) with ``[launch]``. Every task gets the job's secret
(``FLOWMESH_CLUSTER_SECRET_FILE``, a 0600 file created per job: ``flowmesh.cli.secret``),
so its servers refuse processes that are not part of the job. When the chief (or every worker) has
finished, the launcher waits for the evaluator to finish its last evaluation (up to
``EVALUATOR_WAIT_S``), then stops the tasks still running (SIGTERM, then SIGKILL); ps tasks
of ``tf.estimator.train_and_evaluate`` and of a ``ParameterServerStrategy`` exit by themselves
once every trainer is done (a ps that stopped serving gets ``PS_EXIT_WAIT_S`` to exit). The
exit status is the chief's (worker 0's without ``--chief``), or the evaluator's when it
failed after a successful chief; without ``--max-restarts``, if the chief fails, the other
tasks are stopped at once.

Fault tolerance (``--max-restarts K``, or ``JOB=K`` per job, e.g. ``ps=5,worker=2``): a
task that exits with a non-zero status or is killed is restarted with the same identity
(same job, index, port, TF_CONFIG and flags; ``FLOWMESH_RESTART_COUNT`` tells it how many
times it was restarted). A restarted worker rejoins; a restarted ps comes back empty, the
workers' ``MonitoredTrainingSession`` re-creates its session and the chief restores the
ps variables from the last checkpoint in its ``checkpoint_dir``. A task failing after K
restarts fails the job: every task is stopped and the launcher exits with the failed
task's status (128 + N when killed by signal N). With restarts allowed, a warm standby
interpreter (flowmesh already imported) takes over a failed task's identity, so a
restart does not pay for a new interpreter and its imports (``--no-standby`` to turn
it off). See :mod:`flowmesh.cli.restart_policy`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from flowmesh.cli.restart_policy import RestartPolicy, RestartTracker, shell_status
from flowmesh.cli.secret import JobSecret
from flowmesh.distributed.ports import free_ports

HELP = "start a local ps/worker cluster running a training script (TF_CONFIG per task)"
_FLAG_WORDS = ("ps_hosts", "worker_hosts", "job_name")
RESTART_COUNT_VAR = "FLOWMESH_RESTART_COUNT"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ps", type=int, default=1, help="number of parameter-server tasks")
    parser.add_argument("--workers", type=int, default=1, help="number of worker tasks")
    parser.add_argument("--chief", action="store_true", help="add a 'chief' task")
    parser.add_argument("--evaluator", action="store_true", help="add an 'evaluator' task")
    parser.add_argument("--flags", choices=("auto", "always", "never"), default="auto",
                        help="pass --ps_hosts/--worker_hosts/--job_name/--task_index")
    parser.add_argument("--ps-server", action="store_true",
                        help="run ps tasks as `flowmesh server` instead of the script")
    parser.add_argument("--host", default="localhost", help="host name used in the cluster spec")
    parser.add_argument("--timeout", type=float, default=0, help="stop everything after N seconds")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    parser.add_argument("--max-restarts", action="append", metavar="K|JOB=K",
                        help="restart a failed task up to K times (all jobs, or JOB=K for one job; "
                             "repeat or comma-separate); the job fails after that")
    parser.add_argument("--standby", action=argparse.BooleanOptionalAction, default=True,
                        help="keep a warm interpreter ready for restarts (default: on when "
                             "restarts are allowed)")
    parser.add_argument("script", help="the training script (or 'python SCRIPT')")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


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


def make_cluster(args: argparse.Namespace) -> dict[str, list[str]]:
    """The cluster dict on free loopback ports (chief, worker, ps; evaluator is not a job)."""
    counts = {"chief": 1 if args.chief else 0, "worker": args.workers, "ps": args.ps}
    ports = iter(free_ports(sum(counts.values())))
    return {job: [f"{args.host}:{next(ports)}" for _ in range(n)] for job, n in counts.items() if n}


def script_argv(args: argparse.Namespace) -> list[str]:
    """``[python, script, args...]`` for ``script.py args`` or ``python script.py args``."""
    rest = list(args.args)
    if os.path.basename(args.script).startswith("python") and rest:
        return [sys.executable, *rest]
    return [sys.executable, args.script, *rest]


def wants_flags(args: argparse.Namespace, argv: Sequence[str]) -> bool:
    if args.flags != "auto":
        return args.flags == "always"
    script = next((a for a in argv[1:] if a.endswith(".py")), None)
    try:
        with open(script or "", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    return any(word in text for word in _FLAG_WORDS)


def task_flags(cluster: dict[str, list[str]], job: str, index: int) -> list[str]:
    flags = [f"--ps_hosts={','.join(cluster.get('ps', []))}",
             f"--worker_hosts={','.join(cluster.get('worker', []))}",
             f"--job_name={job}", f"--task_index={index}"]
    if "chief" in cluster:
        flags.insert(2, f"--chief_hosts={','.join(cluster['chief'])}")
    return flags


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


class _Label:
    """The prefix of a process's output lines (a standby takes its task's name)."""

    def __init__(self, text: str):
        self.text = text


class Launcher:
    """Starts, watches, restarts and stops the tasks; prefixes their output."""

    def __init__(self, args: argparse.Namespace, out: TextIO | None = None,
                 specs: list[TaskSpec] | None = None, cluster: dict[str, list[str]] | None = None):
        """Starts the tasks ``args`` describe, or the given ``specs`` (with their ``cluster``),
        e.g. the pods of a Kubernetes manifest in ``flowmesh k8s manifest --dry-run``."""
        self.args = args
        self.out = out or sys.stdout
        self.cluster = cluster if cluster is not None else make_cluster(args)
        self.policy = RestartPolicy.parse(getattr(args, "max_restarts", None))
        self.tracker = RestartTracker(self.policy)
        self.tasks: list[Task] = []
        self._out_lock = threading.Lock()
        self._pumps: list[threading.Thread] = []
        self._standby: tuple[subprocess.Popen, _Label] | None = None
        self._trainers_done_at: float | None = None
        self._evaluator_done_at: float | None = None
        self._base_env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._base_env.pop("TF_CONFIG", None)
        self.secret = JobSecret.create(self._base_env)  # removed by stop_all()
        self._base_env.update(self.secret.env)
        for spec in specs if specs is not None else self._specs_from_args(args):
            self.tasks.append(Task(spec.job, spec.index, self._popen(spec.cmd, spec.env, _Label(spec.name)), spec))
        if self.policy.allows_restarts and getattr(args, "standby", True):
            self._start_standby()

    def _specs_from_args(self, args: argparse.Namespace) -> list[TaskSpec]:
        from flowmesh.distributed import tf_config

        argv = script_argv(args)
        flags = wants_flags(args, argv)
        roles = [(j, i) for j in ("chief", "worker", "ps") for i in range(len(self.cluster.get(j, [])))]
        if args.evaluator:
            roles.append(("evaluator", 0))
        threads = _threads_per_task(len(roles))
        self._base_env.setdefault("OMP_NUM_THREADS", str(threads))
        self._base_env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        specs = []
        for job, index in roles:
            env = dict(self._base_env, TF_CONFIG=tf_config.dumps(self.cluster, job, index))
            env[RESTART_COUNT_VAR] = "0"
            if job == "ps" and args.ps_server:
                cmd = [sys.executable, "-m", "flowmesh.cli.main", "server", "--job", "ps", "--task", str(index)]
            else:
                cmd = argv + (task_flags(self.cluster, job, index) if flags and job != "evaluator" else [])
            specs.append(TaskSpec(job, index, cmd, env))
        return specs

    # --- processes -----------------------------------------------------------------------
    def _popen(self, cmd: list[str], env: dict[str, str], label: _Label,
               stdin: Any = subprocess.DEVNULL) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=stdin, text=True, errors="replace", start_new_session=True)
        pump = threading.Thread(target=self._pump, args=(proc, label), daemon=True)
        pump.start()
        self._pumps.append(pump)
        return proc

    def _pump(self, proc: subprocess.Popen, label: _Label) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self._out_lock:
                self.out.write(f"[{label.text}] {line if line.endswith(chr(10)) else line + chr(10)}")
                self.out.flush()

    def _start_standby(self) -> None:
        cmd = [sys.executable, "-m", "flowmesh.cli.standby"]
        label = _Label("standby")
        self._standby = (self._popen(cmd, dict(self._base_env), label, stdin=subprocess.PIPE), label)

    def _take_standby(self, spec: TaskSpec, env: dict[str, str]) -> subprocess.Popen | None:
        """Hands ``spec`` to the warm standby (starting the next one); None if there is none."""
        assignment = standby_argv(spec.cmd)
        if self._standby is None or assignment is None:
            return None
        proc, label = self._standby
        self._start_standby()  # the next restart gets a warm one too
        if proc.poll() is not None or proc.stdin is None:
            return None
        label.text = spec.name
        try:
            proc.stdin.write(json.dumps({"argv": assignment, "env": env}) + "\n")
            proc.stdin.close()
        except OSError:
            _signal_group(proc, signal.SIGKILL)
            return None
        return proc

    def _restart(self, task: Task) -> None:
        """Starts ``task`` again with the same identity (a standby when one is warm)."""
        assert task.spec is not None
        _signal_group(task.proc, signal.SIGKILL)  # leftovers of the failed process's group
        task.restarts += 1
        env = dict(task.spec.env, **{RESTART_COUNT_VAR: str(task.restarts)})
        proc = self._take_standby(task.spec, env)
        how = "warm standby"
        if proc is None:
            proc, how = self._popen(task.spec.cmd, env, _Label(task.name)), "new process"
        task.proc, task.handled = proc, False
        self.say(f"{task.name} restarted (pid {proc.pid}, {how})")

    def say(self, message: str) -> None:
        with self._out_lock:
            self.out.write(f"[launch] {message}\n")
            self.out.flush()

    @property
    def leader(self) -> Task:
        return next(t for t in self.tasks if t.job in ("chief", "worker"))

    # --- watching ------------------------------------------------------------------------
    def wait(self) -> int:
        """Waits for the trainers (restarting failed tasks by policy); returns the exit status."""
        deadline = time.monotonic() + self.args.timeout if self.args.timeout > 0 else None
        while True:
            status = self._check_tasks()
            if status is not None:
                return status
            if deadline is not None and time.monotonic() > deadline:
                self.say(f"timed out after {self.args.timeout:g} s; stopping every task")
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
        procs = [t.proc for t in self.tasks if t.proc.poll() is None]
        if self._standby is not None:
            standby = self._standby[0]
            self._standby = None
            if standby.stdin is not None:
                try:
                    standby.stdin.close()  # end of input: an idle standby exits by itself
                except OSError:
                    pass
            procs.append(standby)
        for proc in procs:
            _signal_group(proc, signal.SIGTERM)
            _signal_group(proc, signal.SIGCONT)  # a stopped (hung) task must see it too
        end = time.monotonic() + self.args.grace
        while time.monotonic() < end and any(p.poll() is None for p in procs):
            time.sleep(0.05)
        for proc in procs:
            if proc.poll() is None:
                _signal_group(proc, signal.SIGKILL)
            proc.wait()
        for pump in self._pumps:
            pump.join(timeout=2.0)
        self.secret.remove()


# How long the launcher waits, after the trainers are done, for an evaluator to finish.
EVALUATOR_WAIT_S = 120.0
# ... and then, in a job with an evaluator, for ps tasks to exit by themselves.
PS_EXIT_WAIT_S = 2.0


def _threads_per_task(tasks: int) -> int:
    """Intra-op threads per task so the local tasks share the cores instead of
    oversubscribing them (the user's OMP_NUM_THREADS wins). OpenMP threads that spin
    while waiting (the default policy) made 5 tasks on 2 cores ~8x slower."""
    return max(1, (os.cpu_count() or 1) // max(1, tasks))


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the task's own session: its children go too
    except (ProcessLookupError, PermissionError):
        pass


def run(args: argparse.Namespace) -> int:
    if args.workers < 1 or args.ps < 0:
        print("flowmesh launch: need --workers >= 1 and --ps >= 0", file=sys.stderr)
        return 2
    try:
        RestartPolicy.parse(getattr(args, "max_restarts", None))
    except ValueError as exc:
        print(f"flowmesh launch: {exc}", file=sys.stderr)
        return 2
    launcher = Launcher(args)
    launcher.say("cluster " + " ".join(f"{j}={','.join(a)}" for j, a in launcher.cluster.items()))
    launcher.say("pids " + " ".join(f"{t.name}={t.proc.pid}" for t in launcher.tasks))
    if launcher.secret.path:
        launcher.say(f"cluster secret in {launcher.secret.path} (FLOWMESH_CLUSTER_SECRET_FILE "
                     "for clients started by hand; deleted when the job ends)")
    interrupted: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        status = launcher.wait()
    except KeyboardInterrupt:
        status = 128 + (interrupted[0] if interrupted else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
        launcher.stop_all()
    return status
