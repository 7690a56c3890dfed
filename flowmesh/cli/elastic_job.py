"""Elastic mode of ``flowmesh run``: ranks may die or join while the job keeps training.

``flowmesh run --min-np M --max-np N -np K SCRIPT`` starts K processes with
``FLOWMESH_ELASTIC=1`` and a member id each (``FLOWMESH_ELASTIC_ID``; output lines are
prefixed with it), hosts the rendezvous store and runs the
:class:`~flowmesh.collective.elastic.coordinator.Coordinator` that decides each round's
membership. Ranks are not fixed: ``hvd.init()`` and every reset of ``hvd.elastic.run``
get rank and size from the round they join. Policy:

* a process that exits abnormally is reported (status, member id) and, with
  ``--restart-failed``, replaced by a new process (at most ``--max-restarts`` in total)
  that joins at the survivors' next commit; nothing is restarted otherwise;
* the job keeps going while at least ``M`` ranks can take part; below that, the ranks
  waiting in the rendezvous get a clear error, the others get ``--failure-grace``
  seconds to report, then everything is stopped and the launcher exits non-zero;
* ``flowmesh run --join HOST:PORT -np J SCRIPT`` (the address is printed at start) adds
  J ranks to the running job, admitted up to ``N``; beyond ``N`` they wait as standbys and
  take the place of the next lost rank;
* the job succeeds when its processes have exited and at least one of them finished
  with status 0 (lost ranks are listed on stderr).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO, Any

from flowmesh import config as _config
from flowmesh.cli.rank_job import RankJob, RunResult
from flowmesh.collective.backends.base import CommunicationError
from flowmesh.collective.backends.torch_dist import connect_store
from flowmesh.collective.elastic import protocol as proto
from flowmesh.collective.elastic.coordinator import Coordinator
from flowmesh.collective.world import split_address
from flowmesh.errors import UnavailableError
from flowmesh.launch.secret import JobSecret

_POLL_S = 0.01
_FIXED_WORLD = ("FLOWMESH_RANK", "FLOWMESH_SIZE", "FLOWMESH_LOCAL_RANK", "FLOWMESH_LOCAL_SIZE",
                "FLOWMESH_ELASTIC_ID")


@dataclass(frozen=True)
class ElasticPolicy:
    """Bounds and restart policy of an elastic job.

    Attributes:
        min_np: fewest ranks the job trains with.
        max_np: most ranks it admits.
        restart_failed: start a replacement for every process that fails.
        max_restarts: most replacements in total.
    """

    min_np: int
    max_np: int
    restart_failed: bool = False
    max_restarts: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.min_np <= self.max_np:
            raise ValueError(f"--min-np {self.min_np} and --max-np {self.max_np} need "
                             "1 <= min-np <= max-np")
        if self.max_restarts < 0:
            raise ValueError(f"--max-restarts must be >= 0, got {self.max_restarts}")

    def check(self, np: int) -> None:
        """Raises ValueError unless ``min_np <= np <= max_np``."""
        if not self.min_np <= np <= self.max_np:
            raise ValueError(f"-np {np} must lie between --min-np {self.min_np} and --max-np "
                             f"{self.max_np}")


def launch_elastic(np: int, argv: list[str], policy: ElasticPolicy | None, *,
                   join: str | None = None, timeout: float | None = None, prefix: bool = True,
                   env: dict[str, str] | None = None, capture: bool = False,
                   out: IO[str] | None = None, failure_grace: float = 5.0,
                   endpoint: str | None = None) -> RunResult:
    """Runs an elastic job (or adds ranks to one with ``join``); see the module docstring.

    ``endpoint`` (``host:port``) is where the job's store listens and what ``--join`` must
    name: an address other hosts reach (default: a free loopback port, this host only).

    Raises:
        ValueError: ``np`` outside the policy's bounds.
        UnavailableError: ``join`` names no reachable elastic job.
    """
    base = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in _FIXED_WORLD}
    base.update(PYTHONUNBUFFERED="1", FLOWMESH_ELASTIC="1")
    sink = out if out is not None else (None if capture else sys.stdout)
    if join is not None:
        host, port = split_address(join, "--join")
        try:
            store = connect_store(host, port, False, None, _config.CONNECT_TIMEOUT_S.get(base),
                                  auth=JobSecret.auth(base))
        except CommunicationError as exc:
            raise UnavailableError(None, None, f"--join {join}: no elastic job answers there "
                                   f"({exc})") from None
        base.update(FLOWMESH_RENDEZVOUS=join)
        job = ElasticJob(np, argv, base, prefix, sink, capture, store, None)
        try:
            return job.wait(timeout, failure_grace)
        finally:
            job.kill_all()
    policy = policy or ElasticPolicy(np, np)
    policy.check(np)
    secret = JobSecret.create(base)
    base.update(secret.env)
    host, port = split_address(endpoint, "--rdzv-endpoint") if endpoint else ("127.0.0.1", 0)
    store = connect_store(host, port, True, None, 30.0, auth=secret.auth(base))
    address = endpoint if endpoint else f"127.0.0.1:{store.port}"
    base.update(FLOWMESH_RENDEZVOUS=address, FLOWMESH_MIN_NP=str(policy.min_np),
                FLOWMESH_MAX_NP=str(policy.max_np))
    job = ElasticJob(np, argv, base, prefix, sink, capture, store, policy)
    job.report(f"elastic job: {np} rank(s), --min-np {policy.min_np}, --max-np {policy.max_np}; "
               f"add ranks with `{_join_hint(secret, address)}`")
    try:
        return job.wait(timeout, failure_grace)
    finally:
        job.finish()
        job.kill_all()
        secret.remove()
        store.close()


def _join_hint(secret: JobSecret, address: str) -> str:
    """The command that adds a rank (it needs the job's secret to reach the store)."""
    env = f"{_config.CLUSTER_SECRET_FILE.name}={secret.path} " if secret.path else ""
    return f"{env}flowmesh run --join {address} -np 1 ..."


class ElasticJob(RankJob):
    """The processes of an elastic launch (``policy`` None: ranks added with ``--join``)."""

    def __init__(self, np: int, argv: list[str], env: dict[str, str], prefix: bool,
                 sink: IO[str] | None, capture: bool, store: Any,
                 policy: ElasticPolicy | None):
        super().__init__(0, argv, env, prefix, sink, capture)
        self.argv, self.env, self.store, self.policy = argv, env, store, policy
        self.members: dict[str, subprocess.Popen] = {}
        self.codes: dict[str, int] = {}
        self.lost: list[str] = []
        self.restarts = 0
        self.coordinator: Coordinator | None = None
        if policy is not None:
            straggler_s = _config.COLLECTIVE_TIMEOUT_S.get(env) + 5.0
            self.coordinator = Coordinator(store, policy.min_np, policy.max_np, straggler_s,
                                           self._running)
        for _ in range(np):
            self._start()

    def report(self, message: str) -> None:
        self._report(message)

    def _start(self) -> str:
        member = str(int(self.store.add(proto.NEXT_ID, 1)) - 1)
        self.members[member] = self.spawn(self.argv, dict(self.env, FLOWMESH_ELASTIC_ID=member),
                                          int(member))
        return member

    def _running(self) -> dict[str, bool]:
        """The children as reaped by ``_reap`` (not a fresh ``poll()``): the coordinator
        hears how a child ended (``member_exited``) before it sees that child stop running,
        so its round reports say "killed by SIGKILL", never a bare "exited"."""
        return {m: m not in self.codes for m in self.members}

    # --- supervision ---------------------------------------------------------------------
    def wait(self, timeout: float | None, failure_grace: float) -> RunResult:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._reap()
            if self.coordinator is not None:
                closed = self.coordinator.poll()
                if closed is not None:
                    self._report_round(closed)
            failure = self._failure()
            if failure is not None:
                self._report(failure)
                self._drain(failure_grace)
                return self._finish(*self._first_loss())
            if all(m in self.codes for m in self.members):
                return self._done()
            if deadline is not None and time.monotonic() > deadline:
                self._report(f"timed out after {timeout:g}s; killing every rank")
                return self._finish(124, None)
            time.sleep(_POLL_S)

    def _reap(self) -> None:
        for member, proc in list(self.members.items()):
            code = proc.poll()
            if member in self.codes or code is None:
                continue
            self.codes[member] = code
            detail = _describe(code)
            if self.coordinator is not None:
                self.coordinator.member_exited(member, detail, code)
            if code == 0:
                continue
            self.lost.append(member)
            left = self.coordinator.live_count() if self.coordinator is not None else None
            finished = sum(1 for c in self.codes.values() if c == 0)
            done = f", {finished} finished" if finished else ""
            remain = f"; {left} rank(s) remain{done} (--min-np {self.policy.min_np})" \
                if left is not None and self.policy is not None else ""
            self._report(f"member {member} (pid {proc.pid}) {detail}{remain}")
            self._maybe_replace(member)

    def _maybe_replace(self, member: str) -> None:
        policy = self.policy
        if policy is None or not policy.restart_failed or self.restarts >= policy.max_restarts:
            return
        self.restarts += 1
        new = self._start()
        self._report(f"started member {new} to replace member {member} (restart "
                     f"{self.restarts} of {policy.max_restarts})")

    def _failure(self) -> str | None:
        coordinator = self.coordinator
        if coordinator is None or self.policy is None:
            return None
        if coordinator.error:
            return f"stopping the job: {coordinator.error}"
        if not self.lost:
            return None
        left = coordinator.live_count()
        # exit codes read after the count: a member counted as gone shows here, so one that
        # just finished its work (a job completing, not a loss) is never taken for a failure
        codes = {m: self.codes.get(m, p.poll()) for m, p in self.members.items()}
        running = any(code is None for code in codes.values())
        finished = any(code == 0 for code in codes.values())
        if running and not finished and left < self.policy.min_np:
            lost = ", ".join(f"{m} ({_describe(self.codes[m])})" for m in self.lost)
            coordinator.fail(f"only {left} rank(s) left, below --min-np "
                             f"{self.policy.min_np} (lost members: {lost}); the job cannot "
                             "continue. Restart it from a checkpoint, lower --min-np, or use "
                             "--restart-failed.")
            return f"stopping the job: {coordinator.error}"
        return None

    def _done(self) -> RunResult:
        if any(code == 0 for code in self.codes.values()):
            if self.lost:
                lost = ", ".join(f"{m} ({_describe(self.codes[m])})" for m in self.lost)
                self._report(f"elastic job finished; lost members along the way: {lost}")
            return self._finish(0, None)
        return self._finish(*self._first_loss())

    def _first_loss(self) -> tuple[int, int | None]:
        """The exit status to report (the first lost member's, else 1) and that member."""
        if not self.lost:
            return 1, None
        return self.codes[self.lost[0]] or 1, int(self.lost[0])

    def _report_round(self, result: proto.RoundResult) -> None:
        text = f"round {result.round}: {len(result.members)} rank(s), members {result.members}"
        if result.lost:
            text += f"; lost {', '.join(result.lost)}"
        if result.waiting:
            text += f"; standby {result.waiting} (--max-np {len(result.members)} reached)"
        self._report(text)

    def finish(self) -> None:
        """Answers members still waiting for a round (the job is over)."""
        if self.coordinator is not None:
            try:
                self.coordinator.fail("the elastic job has finished; no more rounds")
            except (RuntimeError, OSError):
                pass

    def _finish(self, code: int, failed: int | None) -> RunResult:
        result = super()._finish(code, failed)
        order = sorted(self.members, key=int)
        codes = [self.members[m].poll() for m in order]
        return RunResult(result.returncode, failed, codes, result.output)


def _describe(code: int | None) -> str:
    if code == 0:
        return "finished (status 0)"
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name} (status {code})"
        except ValueError:
            pass
    return f"exited with status {code}"
