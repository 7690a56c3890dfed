"""A member's side of the elastic rendezvous: join a round, learn rank and size.

One :class:`Member` per process (:func:`member`), created on the first elastic
``hvd.init()``. It holds two store clients (rendezvous and heartbeat), the member id and
the current round. :meth:`Member.join` arrives at the next round and waits for the
launcher's :class:`~flowmesh.collective.elastic.coordinator.Coordinator` to close it;
survivors of a failure wait at most ``FLOWMESH_ELASTIC_TIMEOUT_S``. A process that is not
yet a member (a replacement or an extra rank) waits until the current members reach a
commit boundary (or, when the group is full, until a member is lost), or until the
launcher ends the job.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from typing import Any

from flowmesh import config as _config
from flowmesh.collective.backends.base import CommunicationError
from flowmesh.collective.backends.torch_dist import connect_store
from flowmesh.collective.elastic import protocol as proto
from flowmesh.collective.world import WorldInfo, split_address
from flowmesh.errors import DeadlineExceededError, UnavailableError

SOURCE = "flowmesh run (elastic)"
_POLL_S = 0.005


class _Heartbeat(threading.Thread):
    """Bumps ``elastic/hb/<id>`` every ``HEARTBEAT_PERIOD_S`` (liveness for launchers that
    did not start this process)."""

    def __init__(self, store: Any, member: str):
        super().__init__(name=f"flowmesh-elastic-heartbeat-{member}", daemon=True)
        self._store = store
        self._key = proto.heartbeat_key(member)
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self._store.add(self._key, 1)
            except (RuntimeError, OSError):
                return  # the launcher (and its store) is gone
            self._halt.wait(proto.HEARTBEAT_PERIOD_S)

    def stop(self) -> None:
        self._halt.set()


class Member:
    """This process in an elastic job.

    Args:
        address: ``host:port`` of the launcher's rendezvous store.
        member_id: the id the launcher gave this process ("" draws a fresh one).
        timeout_s: longest wait of a survivor in a rendezvous.
        min_np, max_np: the job's bounds (for messages; the launcher enforces them).
    """

    def __init__(self, address: str, member_id: str = "", timeout_s: float = 120.0,
                 min_np: int = -1, max_np: int = -1):
        self.host, self.port = split_address(address, "FLOWMESH_RENDEZVOUS")
        connect_s = _config.CONNECT_TIMEOUT_S.get()
        try:
            self.store = connect_store(self.host, self.port, False, None, connect_s)
            beat_store = connect_store(self.host, self.port, False, None, connect_s)
        except CommunicationError as exc:
            raise UnavailableError(None, None, f"Elastic rank could not reach the launcher's "
                                   f"rendezvous store: {exc}") from None
        self.id = member_id or f"x{int(self.store.add(proto.NEXT_ID, 1)) - 1}"
        self.timeout_s = timeout_s
        self.min_np, self.max_np = min_np, max_np
        self.round: int | None = None
        self.result: proto.RoundResult | None = None
        self._arrival = proto.Arrival(self.id, socket.gethostname(), os.getpid())
        self._heartbeat = _Heartbeat(beat_store, self.id)
        self._heartbeat.start()

    # --- rounds --------------------------------------------------------------------------
    def join(self) -> WorldInfo:
        """Arrives at the next round and waits until it is closed.

        Returns:
            This process's place in the new group.

        Raises:
            UnavailableError: the launcher ended the job (e.g. fewer than ``--min-np``
                ranks left) or its store is gone.
            DeadlineExceededError: a survivor waited ``FLOWMESH_ELASTIC_TIMEOUT_S``.
        """
        survivor = self.round is not None
        round_ = self.round + 1 if self.round is not None else self._closed_round() + 1
        start = time.monotonic()
        deadline = start + self.timeout_s if survivor else None
        waited = False
        while True:
            self._arrive(round_)
            result = self._wait_result(round_, deadline, start)
            if result.error:
                raise UnavailableError(None, None, f"Elastic member {self.id} (round "
                                       f"{round_}): {result.error}")
            if self.id in result.members:
                self.round, self.result = round_, result
                return self.world_info()
            if self.id in result.waiting and not waited:
                waited = True
                print(f"[flowmesh elastic] member {self.id}: the job has --max-np "
                      f"{len(result.members)} ranks; waiting as a standby for a free place",
                      file=sys.stderr, flush=True)
            round_ += 1  # late, or no place: take part in the next round

    def world_info(self) -> WorldInfo:
        """The :class:`WorldInfo` of the current round."""
        result = self.result
        if result is None or self.round is None:
            raise UnavailableError(None, None, f"Elastic member {self.id} has not joined a round")
        local_rank, local_size = result.local_place(self.id)
        return WorldInfo(result.members.index(self.id), len(result.members), local_rank,
                         local_size, self.host, self.port, False, SOURCE,
                         prefix=proto.group_prefix(self.round))

    def join_requested(self) -> bool:
        """Whether new members wait for the current group (checked at commits)."""
        try:
            if not self.store.check([proto.JOIN]):
                return False
            return self.round is not None and int(self.store.get(proto.JOIN)) > self.round
        except (RuntimeError, OSError, ValueError):
            return False  # the next collective or rendezvous reports a lost store

    def close(self) -> None:
        self._heartbeat.stop()

    # --- store ---------------------------------------------------------------------------
    def _closed_round(self) -> int:
        if not self.store.check([proto.CLOSED]):
            return -1
        return int(self.store.get(proto.CLOSED))

    def _arrive(self, round_: int) -> None:
        index = int(self.store.add(proto.arrivals_key(round_), 1)) - 1
        self.store.set(proto.arrival_key(round_, index), self._arrival.encode())

    def _wait_result(self, round_: int, deadline: float | None, start: float) -> proto.RoundResult:
        key = proto.result_key(round_)
        while True:
            try:
                if self.store.check([key]):
                    return proto.RoundResult.decode(self.store.get(key))
            except (RuntimeError, OSError) as exc:
                raise UnavailableError(
                    None, None, f"Elastic member {self.id} lost the launcher's rendezvous store "
                    f"at {self.host}:{self.port} while waiting for round {round_} ({exc}); the "
                    "`flowmesh run` process has probably exited") from None
            if deadline is not None and time.monotonic() > deadline:
                raise DeadlineExceededError(
                    None, None, f"Elastic member {self.id} waited {time.monotonic() - start:.0f}s "
                    f"for round {round_} of the rendezvous to close (FLOWMESH_ELASTIC_TIMEOUT_S="
                    f"{self.timeout_s:g}); the other ranks did not come back. Check their logs.")
            time.sleep(_POLL_S)


_lock = threading.Lock()
_member: Member | None = None


def is_elastic() -> bool:
    """Whether this process was started as part of an elastic job."""
    return bool(_config.ELASTIC.get()) or _member is not None


def member() -> Member:
    """This process's :class:`Member` (created on first use from the launcher's env).

    Raises:
        ValueError: not started by ``flowmesh run --min-np/--max-np`` (no rendezvous).
    """
    global _member
    with _lock:
        if _member is None:
            address = _config.RENDEZVOUS.get()
            if not address:
                raise ValueError("Elastic training needs the launcher's rendezvous store: start "
                                 "the job with `flowmesh run --min-np M --max-np N -np K SCRIPT`")
            _member = Member(address, _config.ELASTIC_ID.get(), _config.ELASTIC_TIMEOUT_S.get(),
                             _config.MIN_NP.get(), _config.MAX_NP.get())
        return _member


def join_world() -> WorldInfo:
    """Joins the next round of this process's elastic job (``hvd.init()`` in elastic mode)."""
    return member().join()
