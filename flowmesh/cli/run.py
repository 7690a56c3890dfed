"""Horovod-style launch of an all-reduce job: ``flowmesh run -np N [python] SCRIPT [ARGS]``.

Starts N local processes of the command, each with ``FLOWMESH_RANK``, ``FLOWMESH_SIZE``,
``FLOWMESH_LOCAL_RANK``, ``FLOWMESH_LOCAL_SIZE`` and ``FLOWMESH_RENDEZVOUS`` (the address
of a rendezvous store this launcher hosts, so it outlives any rank). Every output line is
prefixed with ``[rank]``. When a rank fails, the others are terminated (then killed after
a grace period) and the launcher exits with the failed rank's status; it exits 0 when all
ranks succeed.

Elastic mode (``--min-np``, ``--max-np``, ``--restart-failed``; see
:mod:`flowmesh.cli.elastic_job`): a rank that dies does not stop the job; the survivors
re-form the group (``hvd.elastic``) and keep training while at least ``--min-np`` ranks
remain; replacements (``--restart-failed``) and extra ranks (``flowmesh run --join
HOST:PORT -np K SCRIPT``, up to ``--max-np``) join at the next commit.

Examples:
    flowmesh run -np 2 python examples/allreduce_mnist.py
    flowmesh run -np 4 examples/allreduce_mnist.py --steps 200
    flowmesh run --min-np 2 --max-np 4 -np 3 examples/elastic_allreduce.py
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

HELP = "launch N local ranks of an all-reduce (Horovod-style) script"
_GRACE_S = 3.0


@dataclass
class RunResult:
    """How a launch ended.

    Attributes:
        returncode: 0, or the status of the first rank that failed.
        failed_rank: that rank, or None.
        returncodes: every rank's status (None when it was killed by the launcher).
        output: captured ``(rank, stream, line)`` tuples when capturing.
    """

    returncode: int
    failed_rank: int | None
    returncodes: list[int | None]
    output: list[tuple[int, str, str]] = field(default_factory=list)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-np", "--num-proc", dest="np", type=int, required=True,
                        help="number of ranks (processes) to start")
    parser.add_argument("--timeout", type=float, default=None,
                        help="kill every rank after this many seconds (default: none)")
    parser.add_argument("--failure-grace", type=float, default=5.0,
                        help="after a rank fails, seconds the others get to report and exit "
                             "before they are terminated (default 5)")
    parser.add_argument("--no-prefix", action="store_true", help="do not prefix output lines")
    elastic = parser.add_argument_group("elastic training (hvd.elastic)")
    elastic.add_argument("--min-np", type=int, default=None,
                         help="elastic: keep training while at least this many ranks remain "
                              "(default: -np)")
    elastic.add_argument("--max-np", type=int, default=None,
                         help="elastic: admit new ranks up to this many (default: -np)")
    elastic.add_argument("--restart-failed", action="store_true",
                         help="elastic: start a replacement for every rank that fails")
    elastic.add_argument("--max-restarts", type=int, default=3,
                         help="elastic: most replacements started in total (default 3)")
    elastic.add_argument("--join", metavar="HOST:PORT", default=None,
                         help="add -np ranks to the running elastic job whose launcher "
                              "prints this rendezvous address")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="`python SCRIPT [ARGS]` or `SCRIPT.py [ARGS]` or any program")


def run(args: argparse.Namespace) -> int:
    if not args.command:
        print("flowmesh run: missing the command to launch, e.g. "
              "`flowmesh run -np 2 python train.py`", file=sys.stderr)
        return 2
    from flowmesh.errors import UnavailableError

    try:
        policy = elastic_policy(args)
        result = launch(args.np, args.command, timeout=args.timeout, prefix=not args.no_prefix,
                        failure_grace=args.failure_grace, elastic=policy, join=args.join)
    except (ValueError, UnavailableError) as exc:
        print(f"flowmesh run: {exc}", file=sys.stderr)
        return 2
    return result.returncode


def elastic_policy(args: argparse.Namespace) -> Any:
    """The :class:`~flowmesh.cli.elastic_job.ElasticPolicy` the flags ask for, or None.

    Raises:
        ValueError: inconsistent bounds.
    """
    if args.min_np is None and args.max_np is None and not args.restart_failed and not args.join:
        return None
    from flowmesh.cli.elastic_job import ElasticPolicy

    min_np = args.np if args.min_np is None else args.min_np
    max_np = max(args.np, min_np) if args.max_np is None else args.max_np
    return ElasticPolicy(min_np, max_np, args.restart_failed, args.max_restarts)


def resolve_command(command: Sequence[str]) -> list[str]:
    """``SCRIPT.py ARGS`` and ``python SCRIPT ARGS`` run with this interpreter.

    Raises:
        ValueError: an empty command.
    """
    command = list(command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ValueError("empty command: give `python SCRIPT [ARGS]` or `SCRIPT.py [ARGS]`")
    if command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    if command[0].endswith(".py"):
        return [sys.executable, *command]
    return command


def launch(np: int, command: Sequence[str], *, timeout: float | None = None, prefix: bool = True,
           env: dict[str, str] | None = None, capture: bool = False,
           out: IO[str] | None = None, failure_grace: float = 5.0, elastic: Any = None,
           join: str | None = None) -> RunResult:
    """Runs ``np`` ranks of ``command`` to completion; see the module docstring.

    Args:
        np: number of ranks (>= 1).
        command: the program and its arguments.
        timeout: seconds before every rank is killed (result: status 124).
        prefix: prefix output lines with ``[rank]``.
        env: extra environment for every rank.
        capture: also return the output lines in the result.
        out: where lines are written (default ``sys.stdout``; None with capture: nowhere).
        failure_grace: after a rank fails, how long the others may run to report the
            failure (e.g. the stalled-ranks error) before they are terminated.
        elastic: an :class:`~flowmesh.cli.elastic_job.ElasticPolicy`: elastic mode.
        join: ``host:port`` of a running elastic job to add the ``np`` ranks to.

    Returns:
        A :class:`RunResult`.

    Raises:
        ValueError: ``np < 1``, an empty command, or inconsistent elastic bounds.
    """
    if np < 1:
        raise ValueError(f"-np must be at least 1, got {np}")
    argv = resolve_command(command)
    if elastic is not None or join is not None:
        from flowmesh.cli.elastic_job import launch_elastic

        return launch_elastic(np, argv, elastic, join=join, timeout=timeout, prefix=prefix,
                              env=env, capture=capture, out=out, failure_grace=failure_grace)
    from flowmesh.cli.secret import JobSecret
    from flowmesh.collective.backends.torch_dist import connect_store

    store = connect_store("127.0.0.1", 0, True, None, 30.0)  # kept alive until the end
    base = dict(os.environ)
    base.update(env or {})
    secret = JobSecret.create(base)
    base.update(secret.env)
    base.update(PYTHONUNBUFFERED="1", FLOWMESH_SIZE=str(np), FLOWMESH_LOCAL_SIZE=str(np),
                FLOWMESH_RENDEZVOUS=f"127.0.0.1:{store.port}")
    sink = out if out is not None else (None if capture else sys.stdout)
    job = _Job(np, argv, base, prefix, sink, capture)
    try:
        return job.wait(timeout, failure_grace)
    finally:
        job.kill_all()
        secret.remove()
        del store


class _Job:
    """The ranks of one launch, their output pumps and the failure policy."""

    def __init__(self, np: int, argv: list[str], env: dict[str, str], prefix: bool,
                 sink: IO[str] | None, capture: bool):
        self.lock = threading.Lock()
        self.output: list[tuple[int, str, str]] = []
        self.capture = capture
        self.sink = sink
        self.prefix = prefix
        self.procs: list[subprocess.Popen] = []
        self.pumps: list[threading.Thread] = []
        for rank in range(np):
            self.spawn(argv, dict(env, FLOWMESH_RANK=str(rank), FLOWMESH_LOCAL_RANK=str(rank)), rank)

    def spawn(self, argv: list[str], env: dict[str, str], label: int) -> subprocess.Popen:
        """Starts one process whose output lines are prefixed with ``[label]``."""
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
        self.procs.append(proc)
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            pump = threading.Thread(target=self._pump, args=(label, name, stream), daemon=True)
            pump.start()
            self.pumps.append(pump)
        return proc

    def _pump(self, rank: int, name: str, stream: Any) -> None:
        for line in stream:
            line = line.rstrip("\n")
            with self.lock:
                if self.capture:
                    self.output.append((rank, name, line))
                if self.sink is not None:
                    text = f"[{rank}] {line}" if self.prefix else line
                    target = sys.stderr if (name == "stderr" and self.sink is sys.stdout) else self.sink
                    print(text, file=target, flush=True)

    def wait(self, timeout: float | None, failure_grace: float) -> RunResult:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in self.procs]
            failed = next((r for r, c in enumerate(codes) if c not in (None, 0)), None)
            if failed is not None:
                self._report(f"rank {failed} exited with status {codes[failed]}; stopping the "
                             "other ranks")
                self._drain(failure_grace)
                return self._finish(codes[failed] or 1, failed)
            if all(c == 0 for c in codes):
                return self._finish(0, None)
            if deadline is not None and time.monotonic() > deadline:
                self._report(f"timed out after {timeout:g}s; killing every rank")
                return self._finish(124, None)
            time.sleep(0.05)

    def _drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and any(p.poll() is None for p in self.procs):
            time.sleep(0.05)

    def _finish(self, code: int, failed: int | None) -> RunResult:
        self.kill_all()
        for pump in self.pumps:
            pump.join(timeout=2.0)
        codes = [p.poll() for p in self.procs]
        return RunResult(code, failed, codes, list(self.output))

    def _report(self, message: str) -> None:
        with self.lock:
            print(f"flowmesh run: {message}", file=sys.stderr, flush=True)

    def kill_all(self) -> None:
        """Terminates the ranks still running (their process groups), then kills them."""
        alive = [p for p in self.procs if p.poll() is None]
        _signal_all(alive, signal.SIGTERM)
        deadline = time.monotonic() + _GRACE_S
        while any(p.poll() is None for p in alive) and time.monotonic() < deadline:
            time.sleep(0.05)
        _signal_all([p for p in alive if p.poll() is None], signal.SIGKILL)
        for p in alive:
            try:
                p.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                pass


def _signal_all(procs: list[subprocess.Popen], sig: int) -> None:
    send: Callable[[int, int], None] = os.killpg
    for p in procs:
        try:
            send(p.pid, sig)  # each rank leads its own session (start_new_session=True)
        except (ProcessLookupError, PermissionError):
            pass
