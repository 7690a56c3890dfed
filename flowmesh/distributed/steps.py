"""Per-step rendezvous of a worker: where tensors pushed by other tasks wait for their Recv.

Step ids are chosen by the master that drives the step (random 63-bit ints, unique across
the cluster). A tensor may arrive before the worker starts its part of the step, so
mailboxes are created on first touch. When the worker's part of a step ends, its mailbox
is dropped and the id is remembered for a while so that late tensors of an aborted step
are discarded instead of leaking. Tensors pushed for a step this worker never runs (its
master died, or a peer sends junk step ids) are dropped after
``FLOWMESH_ORPHAN_TENSOR_S`` by a sweeper thread.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Any

from flowmesh import config as _config
from flowmesh.errors import AbortedError, OpError, UnavailableError
from flowmesh.kernels.contract.rendezvous import Rendezvous

log = logging.getLogger("flowmesh.distributed")
_FINISHED_MEMORY = 65536


class _Active:
    __slots__ = ("rendezvous", "peers", "runs", "created")

    def __init__(self) -> None:
        self.rendezvous = Rendezvous()
        self.peers: set[str] = set()
        self.runs = 0
        self.created = time.monotonic()

    def __repr__(self) -> str:
        age = time.monotonic() - self.created
        return f"<step part: {self.runs} running, peers {sorted(self.peers)}, {age:.1f} s old>"


class StepTable:
    """Mailboxes of the steps a worker takes part in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[int, _Active] = {}
        self._finished: set[int] = set()
        self._finished_order: collections.deque[int] = collections.deque()
        self._lost: dict[str, float] = {}  # peer -> when its connection was lost
        self._orphan_age = _config.ORPHAN_TENSOR_S.get()
        self._sweeper: threading.Thread | None = None
        self._closed = threading.Event()

    def begin(self, step_id: int, peers: set[str], requested_at: float | None = None) -> Rendezvous:
        """Starts this worker's part of ``step_id``; ``peers`` are the tasks it depends on.

        ``requested_at`` (``time.monotonic()`` when the request arrived) catches a peer
        lost between the request's arrival and this call.

        Raises:
            AbortedError: the step was already aborted here (e.g. a peer died).
            UnavailableError: a peer it depends on was lost since the request arrived.
        """
        with self._lock:
            lost = [p for p in peers if self._lost.get(p, -1.0) >= (requested_at or time.monotonic())]
            if lost:
                self._retire(step_id)
                raise UnavailableError(
                    None, None, f"Task {lost[0]} became unreachable before step {step_id} started here"
                )
            entry = self._entry(step_id)
            if entry is None:
                raise AbortedError(None, None, f"Step {step_id} was already aborted on this task")
            entry.peers |= peers
            entry.runs += 1
            return entry.rendezvous

    def end(self, step_id: int) -> None:
        """Ends one ``begin``; the mailbox goes away when the last part ends."""
        with self._lock:
            entry = self._active.get(step_id)
            if entry is None:
                return
            entry.runs -= 1
            if entry.runs <= 0:
                self._retire(step_id)

    def deliver(self, step_id: int, key: Any, value: Any, sender: str = "") -> None:
        """Hands a pushed tensor to its step (dropped if the step is over)."""
        with self._lock:
            entry = self._entry(step_id)
            if entry is not None and sender:
                entry.peers.add(sender)
            if entry is not None and entry.runs == 0 and self._sweeper is None:
                self._sweeper = threading.Thread(target=self._sweep_loop, daemon=True,
                                                 name="flowmesh-orphan-sweeper")
                self._sweeper.start()
        if entry is not None:
            try:
                entry.rendezvous.send(key, value)
            except OpError:
                pass  # duplicate delivery of a retried push: keep the first value

    def abort(self, step_id: int, error: BaseException) -> None:
        """Fails every Recv of ``step_id`` waiting here (now or later)."""
        with self._lock:
            entry = self._active.get(step_id)
            if entry is None:
                self._remember(step_id)
                return
        entry.rendezvous.abort(error)

    def abort_peer(self, peer: str, error: BaseException) -> int:
        """Aborts every active step that depends on ``peer``; returns how many."""
        with self._lock:
            self._lost[peer] = time.monotonic()
            victims = [(s, e) for s, e in self._active.items() if peer in e.peers]
            for step_id, entry in victims:
                if entry.runs == 0:  # only tensors arrived: nothing will run it now
                    self._retire(step_id)
        for _, entry in victims:
            entry.rendezvous.abort(error)
        return len(victims)

    def active_steps(self) -> int:
        with self._lock:
            return len(self._active)

    # --- internals (lock held) ---------------------------------------------------------
    def _entry(self, step_id: int) -> _Active | None:
        entry = self._active.get(step_id)
        if entry is None:
            if step_id in self._finished:
                return None
            entry = self._active[step_id] = _Active()
        return entry

    def _retire(self, step_id: int) -> None:
        self._active.pop(step_id, None)
        self._remember(step_id)

    def _remember(self, step_id: int) -> None:
        if step_id in self._finished:
            return
        self._finished.add(step_id)
        self._finished_order.append(step_id)
        while len(self._finished_order) > _FINISHED_MEMORY:
            self._finished.discard(self._finished_order.popleft())

    def _sweep(self) -> int:
        """Drops mailboxes that received tensors but never ran (their step died)."""
        cutoff = time.monotonic() - self._orphan_age
        orphans = [s for s, e in self._active.items() if e.runs == 0 and e.created < cutoff]
        for step_id in orphans:
            self._retire(step_id)
        return len(orphans)

    def _sweep_loop(self) -> None:
        while not self._closed.wait(max(0.05, self._orphan_age / 4)):
            with self._lock:
                dropped = self._sweep()
            if dropped:
                log.warning("dropped the tensors of %d step(s) nobody ran within %g s "
                            "(FLOWMESH_ORPHAN_TENSOR_S)", dropped, self._orphan_age)

    def close(self) -> None:
        """Stops the sweeper thread."""
        self._closed.set()
