"""Local multi-process clusters for tests and benchmarks (loopback only).

Example:
    >>> with LocalCluster({"ps": 1, "worker": 2}) as cluster:      # server processes
    ...     target = cluster.target("worker", 0)
    ...     cluster.kill("worker", 1)                                # SIGKILL, by pid

Every process started here is tracked by pid and killed on exit, never by name.
``spawn_python`` runs a Python snippet in a child process (e.g. a between-graph worker
that creates its own server), with the same interpreter and a clean ``TF_CONFIG``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from flowmesh.distributed.ports import free_ports
from flowmesh.launch.processes import ProcessGroup, signal_group
from flowmesh.launch.roles import local_cluster

__all__ = ["Child", "LocalCluster", "child_env", "cluster_dict", "free_ports", "run_chief_and_worker",
           "spawn_python", "spawn_server"]


def cluster_dict(tasks: Mapping[str, int], host: str = "localhost") -> dict[str, list[str]]:
    """``{"ps": 2, "worker": 3}`` -> a cluster dict on free loopback ports."""
    return local_cluster(tasks, host)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for child processes: unbuffered output, no inherited TF_CONFIG,
    and this checkout of flowmesh first on the path."""
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


class Child:
    """A child process whose combined output is collected by a background thread (it
    leads its own process group: :meth:`kill` reaches what it started too)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None, name: str = "",
                 cwd: str | None = None):
        self.name = name or argv[-1]
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._group = ProcessGroup(self._line)
        self.proc = self._group.spawn(argv, env or child_env(), self.name, cwd=cwd or REPO).proc

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _line(self, label: str, stream: str, line: str) -> None:
        with self._cond:
            self.lines.append(line)
            self._cond.notify_all()

    def wait_for_line(self, text: str, timeout: float) -> str:
        """The first output line containing ``text``.

        Raises:
            TimeoutError / RuntimeError: not seen in time / the process exited first.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines:
                    if text in line:
                        return line
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.output()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{self.name} printed no {text!r} in {timeout}s:\n{self.output()}")
                self._cond.wait(min(remaining, 0.2))

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait(self, timeout: float) -> int:
        """The exit status (killing the process if it does not exit within ``timeout``)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def json_lines(self) -> list[Any]:
        """Output lines that are JSON objects (how test snippets report results)."""
        out = []
        for line in self.lines:
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    def pause(self, timeout: float = 10.0) -> None:
        """SIGSTOP, returning once the kernel reports the process stopped (the signal is
        delivered asynchronously: a request sent right after ``kill`` may still be
        answered)."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] in "Tt":
                    return
            time.sleep(0.005)
        raise TimeoutError(f"{self.name} (pid {self.proc.pid}) did not stop")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signals this process's group (by pid) and reaps the process."""
        if self.proc.poll() is None:
            signal_group(self.proc, sig)
            signal_group(self.proc, signal.SIGCONT)  # a paused child must see it too
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                signal_group(self.proc, signal.SIGKILL)
                self.proc.wait(10)


def spawn_server(cluster: Mapping[str, Any], job: str, task: int,
                 env: Mapping[str, str] | None = None, cpus: int = 1) -> Child:
    """Starts ``flowmesh server`` for one task (returns at once; see :meth:`Child.wait_for_line`)."""
    argv = [sys.executable, "-m", "flowmesh.cli.main", "server", "--cluster", json.dumps(dict(cluster)),
            "--job", job, "--task", str(task), "--cpus", str(cpus)]
    return Child(argv, child_env(env), name=f"{job}:{task}")


def run_chief_and_worker(script: str, timeout: float) -> dict[int, dict[str, Any]]:
    """Runs ``script`` as the chief and one worker of a two-task ``TF_CONFIG`` cluster on
    free loopback ports (one intra-op thread each, 30 s collective timeout) and returns
    each task's ``RESULT <json>`` line, keyed by the record's ``rank``.

    Raises:
        RuntimeError: a task exited with an error (its stderr's tail is in the message).
        subprocess.TimeoutExpired: a task ran longer than ``timeout`` (both are killed).
    """
    chief, worker = free_ports(2)
    cluster = {"chief": [f"127.0.0.1:{chief}"], "worker": [f"127.0.0.1:{worker}"]}
    procs = []
    for task_type in ("chief", "worker"):
        env = dict(os.environ, OMP_NUM_THREADS="1", FLOWMESH_COLLECTIVE_TIMEOUT_S="30",
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": task_type, "index": 0}}))
        procs.append(subprocess.Popen([sys.executable, script], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = {}
    try:
        for task_type, proc in zip(("chief", "worker"), procs):
            out, err = proc.communicate(timeout=timeout)
            if proc.returncode != 0:
                raise RuntimeError(f"the {task_type} exited with {proc.returncode}:\n{err[-3000:]}")
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    record = json.loads(line[7:])
                    results[record["rank"]] = record
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results


def spawn_python(code: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None,
                 name: str = "python") -> Child:
    """Runs ``python -c code args...`` (``sys.argv[1:]`` are ``args``)."""
    return Child([sys.executable, "-c", code, *args], child_env(env), name=name)


class LocalCluster:
    """Server processes for some tasks of a cluster on loopback ports.

    Args:
        tasks: ``{"ps": 2, "worker": 3}``.
        start: which ``(job, index)`` to start as server processes (default: all); the
            others are left for the test (e.g. a server inside the test process).
        ready_timeout: seconds to wait for each server's ready line.
    """

    def __init__(self, tasks: Mapping[str, int], start: Sequence[tuple[str, int]] | None = None,
                 ready_timeout: float = 60.0, env: Mapping[str, str] | None = None):
        self.cluster = cluster_dict(tasks)
        self.children: dict[tuple[str, int], Child] = {}
        wanted = list(start) if start is not None else [(j, i) for j, n in tasks.items() for i in range(n)]
        try:
            for job, index in wanted:
                self.children[(job, index)] = spawn_server(self.cluster, job, index, env)
            for child in self.children.values():
                child.wait_for_line("ready at", ready_timeout)
        except BaseException:
            self.stop()
            raise

    def address(self, job: str, index: int) -> str:
        return self.cluster[job][index]

    def target(self, job: str, index: int) -> str:
        return "grpc://" + self.address(job, index)

    def kill(self, job: str, index: int, sig: int = signal.SIGKILL) -> None:
        self.children[(job, index)].kill(sig)

    def stop(self) -> None:
        for child in self.children.values():
            child.kill(signal.SIGTERM)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
