"""The collective engine: a background thread that negotiates, fuses and runs collectives.

Kernels :meth:`~CollectiveEngine.submit` requests and get a :class:`Handle` back at once;
the engine thread of every rank then repeats *cycles* while it has unfinished requests:

1. all-gather the descriptors of newly submitted requests (one small control message);
2. add every rank's descriptors to the identical negotiation :class:`Table`;
3. take the collectives every rank has asked for, check that they agree (dtype, shape,
   reduction), group compatible ones into fusion buckets, and run them on the
   communicator; fill the handles.

Because submission never blocks, a kernel can start a bucket's all-reduce and let the
rest of backprop run while the engine thread transfers it (overlap); the apply step
waits on the handle. Failures never hang: a mismatch fails that collective on every
rank; requests pending past ``FLOWMESH_COLLECTIVE_TIMEOUT_S`` are reported by rank 0 with
the stalled ranks; a dead or silent peer makes the communicator fail within the same
timeout, and the report names the missing ranks and their heartbeat status. After a
stall or a communication failure the engine is broken: every later request fails with
the same error (the ranks can no longer be trusted to be in step).

The engine negotiates and runs cycles; two parts decide around it: the speculation
policy (``speculation_policy.py``: when every rank guesses the next single all-reduce) and
the stream manager (``stream_manager.py``: which keys moved to channels of their own, and
their requests in flight).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh import config as _config
from flowmesh.collective.backends.base import CommunicationError, Communicator
from flowmesh.collective.execute import INLINE_BUDGET, Executor, Job, inline_payload
from flowmesh.collective.fusion import BufferPool, fusion_threshold_bytes
from flowmesh.collective.negotiation import (
    Message,
    Table,
    check_agreement,
    stall_report,
)
from flowmesh.collective.request import Handle, Request
from flowmesh.collective.speculation import run_speculative
from flowmesh.collective.speculation_policy import SpeculationPolicy
from flowmesh.collective.stream_manager import StreamManager
from flowmesh.collective.timeline import Event, open_timeline
from flowmesh.errors import (
    AbortedError,
    DeadlineExceededError,
    InternalError,
    InvalidArgumentError,
    OpError,
    UnavailableError,
)

_MAX_IDLE_SLEEP_S = 0.02
_MIN_CAPACITY = 1 << 10
_MAX_CAPACITY = 4 << 20


@dataclass
class EngineStats:
    """Counters for tests, benchmarks and debugging."""

    cycles: int = 0
    collectives: int = 0
    transfers: int = 0
    fused_tensors: int = 0
    bytes: int = 0
    speculative: int = 0
    in_place: int = 0  # transfers that ran on a donated input, without a copy


class CollectiveEngine:
    """Negotiates and runs the collectives of one communicator (one group member).

    Args:
        comm: this member's communicator.
        label: the group's name, used in trace lanes and messages.
        timeout_s: stall timeout (default ``FLOWMESH_COLLECTIVE_TIMEOUT_S``).
    """

    def __init__(self, comm: Communicator, label: str = "world", timeout_s: float | None = None):
        self.comm = comm
        self.label = label
        self.timeout_s = timeout_s if timeout_s is not None else _config.COLLECTIVE_TIMEOUT_S.get()
        self.stats = EngineStats()
        self.events: deque[Event] = deque(maxlen=4096)
        self._table = Table(comm.size)
        self._pending: dict[str, deque[Request]] = {}
        self._pending_count = 0
        self._new: list[Request] = []
        self._verdicts: list[str] = []
        self._capacity = _MIN_CAPACITY  # bytes per rank of the next control round
        self._failure: OpError | None = None
        self._closed = False
        self._busy = False  # a thread is running a cycle (the engine thread or a caller)
        self._cv = threading.Condition()
        self.speculation = SpeculationPolicy(comm.size)  # speculation_policy.py
        self.streams = StreamManager(comm, self._cv, self._record_streamed,
                                     lambda requests: self._requeue(requests, wake=True),
                                     self._fail_streamed)  # stream_manager.py
        self._timeline = open_timeline(comm.rank)
        self._executor = Executor(comm, BufferPool(), self._record)
        self._thread = threading.Thread(target=self._run, name=f"flowmesh-collective-{label}",
                                        daemon=True)
        self._thread.start()

    # --- public ------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return self.comm.rank

    @property
    def size(self) -> int:
        return self.comm.size

    @property
    def failure(self) -> OpError | None:
        """The error that broke this engine (every later request fails with it), or None."""
        return self._failure

    def submit(self, request: Request) -> Handle:
        """Queues ``request``; returns its handle immediately.

        Raises:
            OpError: the engine is broken by an earlier failure, or closed.
        """
        with self._cv:
            self._check_usable()
            stream = self.streams.active.get(request.key)
            if stream is None:
                self._new.append(request)
                self._cv.notify_all()
        if stream is not None:
            self.streams.start(stream, request)
        return request.handle

    def run(self, request: Request, timeout: float | None = None,
            abort: Callable[[], BaseException | None] | None = None) -> list[Any]:
        """Submits ``request`` and waits for its outputs.

        When the engine thread is idle and no deadline applies, the cycle runs in the
        calling thread (saving two thread switches per collective); requests that stay
        pending are then finished by the engine thread as usual.
        """
        with self._cv:
            self._check_usable()
            streaming = request.key in self.streams.active
            direct = not streaming and timeout is None and self._idle() and not self._new
            if direct:
                self._busy = True
            elif not streaming:
                self._new.append(request)
                self._cv.notify_all()
        if streaming:
            self.submit(request)
        elif direct:
            self._guarded_cycle([request])
        return self.wait(request.handle, timeout, abort)

    def wait(self, handle: Handle, timeout: float | None = None,
             abort: Callable[[], BaseException | None] | None = None) -> list[Any]:
        """Waits for a submitted request. When the engine thread has not picked up the
        queued requests yet (it is waking up), this thread runs their cycle itself, as
        :meth:`run` does: the hand-off would cost two thread switches for nothing."""
        self.streams.finish(handle)
        batch = None
        with self._cv:
            if timeout is None and self._idle() and any(r.handle is handle for r in self._new):
                batch, self._new = self._new, []
                self._busy = True
        if batch is not None:
            self._guarded_cycle(batch)
        return handle.wait(timeout, abort)

    def _idle(self) -> bool:
        """No cycle running and nothing waiting on other ranks (the caller holds ``_cv``):
        a cycle may run in the calling thread, unless the backend's members may share
        threads (``Communicator.caller_may_block``)."""
        return self.comm.caller_may_block and not self._busy and not self._pending_count

    def _check_usable(self) -> None:
        if self._failure is not None:
            err = self._failure
            raise type(err)(None, None, f"{err.message} (collective engine '{self.label}' is "
                            "unusable after this failure; restart the job)")
        if self._closed:
            raise AbortedError(None, None, f"Collective engine '{self.label}' was shut down; "
                               "call flowmesh.collective.init() again")

    def close(self) -> None:
        """Stops the engine thread once it has no unfinished requests; fails the rest."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join(timeout=1.0)
        self.streams.close()
        if self._timeline is not None:
            self._timeline.close()

    # --- engine thread -----------------------------------------------------------------------
    def _run(self) -> None:
        idle = 0.0
        while True:
            new = self._next_batch(idle)
            if new is None:
                return
            progressed = self._guarded_cycle(new)
            del new  # finished requests must not outlive their results (pooled buffers)
            if progressed is None:
                return
            idle = 0.0 if progressed else min(max(idle * 2, 0.0002), _MAX_IDLE_SLEEP_S)

    def _guarded_cycle(self, new: list[Request]) -> bool | None:
        """One cycle (the caller has set ``_busy``); None when it broke the engine."""
        try:
            return self._cycle(new)
        except CommunicationError as exc:
            self._fail_all(self._communication_error(exc), new)
        except OpError as exc:
            self._fail_all(exc, new)
        except Exception as exc:  # noqa: BLE001 - a bug must fail requests, not hang them
            self._fail_all(InternalError(None, None, f"collective engine '{self.label}' "
                                         f"crashed: {type(exc).__name__}: {exc}"), new)
        finally:
            with self._cv:
                self._busy = False
                if self._new or self._pending_count or self._closed or self._failure:
                    self._cv.notify_all()  # else the engine thread has nothing to wake for
        return None

    def _next_batch(self, idle: float) -> list[Request] | None:
        """The requests for the engine thread's next cycle (marks the engine busy); waits
        ``idle`` seconds first when nothing new arrived; None when the thread must end."""
        with self._cv:
            waited = False
            while True:
                work = bool(self._new or self._pending_count)
                if self._failure is not None or (self._closed and not work):
                    return None
                if self._busy or not work:
                    self._cv.wait()
                elif not self._new and idle and not waited:
                    waited = True
                    self._cv.wait(idle)
                else:
                    new, self._new = self._new, []
                    self._busy = True
                    return new

    def _cycle(self, new: list[Request]) -> bool:
        active = self.streams.active
        if active and new:  # submitted before their key started streaming
            routed = [r for r in new if r.key in active]
            new = [r for r in new if r.key not in active]
            for request in routed:
                self.streams.start(active[request.key], request)
            if not new:
                return True
        if self.speculation.guess is not None and new:
            return self._speculative_cycle(new)
        start = time.perf_counter()
        for request in new:
            self._pending.setdefault(request.key, deque()).append(request)
            self._pending_count += 1
        verdicts, self._verdicts = self._verdicts, []
        message = Message([r.descriptor for r in new], verdicts)
        if self.size > 1:
            budget = INLINE_BUDGET // (self.size - 1)
            for i, request in enumerate(new):
                data = inline_payload(request, budget)
                if data is not None:
                    message.inline[i] = data
                    budget -= len(data)
        payload = message.encode()
        raws = self.comm.allgather_bytes(payload, self._capacity) if self.size > 1 else [payload]
        self._capacity = _next_capacity(raws)
        self.stats.cycles += 1
        stalled: list[str] = []
        sent: list[int] = []  # requests per rank
        for rank, raw in enumerate(raws):
            received = Message.decode(raw)
            sent.append(len(received.descriptors))
            if rank == 0:
                stalled = received.stalled
            for i, d in enumerate(received.descriptors):
                self._table.add(rank, d, received.inline.get(i))
        if new:
            self._record(Event("negotiate", [r.name for r in new], len(payload), start,
                               time.perf_counter()), new)
        if stalled:
            raise DeadlineExceededError(None, None, " ".join(
                stall_report(self._table, key, self.timeout_s) for key in stalled))
        ready = self._table.pop_ready()
        if ready:
            self._execute(ready)
        if self.rank == 0 and self._pending_count:
            self._verdicts = self._table.stalled(self.timeout_s)
        self.speculation.observe(ready, len(self._table) == 0, sent,
                                 lambda key: key in self.streams.active)
        return bool(new or ready)

    def _speculative_cycle(self, new: list[Request]) -> bool:
        candidate, rest = new[0], new[1:]
        guess = self.speculation.guess
        assert guess is not None
        if run_speculative(self.comm, self._executor.pool, guess, candidate, self._record):
            self.stats.cycles += 1
            self.stats.collectives += 1
            self.stats.speculative += 1
            self.speculation.right()
            self._requeue(rest)
            return True
        self.speculation.wrong()
        self._requeue(new)
        return True

    def _requeue(self, requests: list[Request], wake: bool = False) -> None:
        """Puts requests back, first in line, for the next cycle."""
        if requests:
            with self._cv:
                self._new[:0] = requests
                if wake:
                    self._cv.notify_all()

    def _execute(self, ready: Sequence[Any]) -> None:
        jobs: list[Job] = []
        for item in ready:
            request = self._pending[item.key].popleft()
            if not self._pending[item.key]:
                del self._pending[item.key]
            self._pending_count -= 1
            problem = check_agreement(item)
            if problem is not None:
                request.handle.fail(InvalidArgumentError(None, None, problem))
                continue
            jobs.append(Job(request, item.descriptors, item.inline))
            self.streams.note_steady(item, self._table.has_pending(item.key))
        if jobs:
            self._executor.run(jobs, fusion_threshold_bytes())
            self.stats.collectives += len(jobs)

    # --- events and failures -----------------------------------------------------------------
    def _record_streamed(self, event: Event, requests: Sequence[Request]) -> None:
        self.stats.collectives += 1
        self.stats.speculative += 1
        self._record(event, requests)

    def _fail_streamed(self, exc: CommunicationError, requests: list[Request]) -> None:
        self._fail_all(self._communication_error(exc, requests), requests)

    def _record(self, event: Event, requests: Sequence[Request]) -> None:
        self.events.append(event)
        if event.kind != "negotiate":
            self.stats.transfers += 1
            self.stats.bytes += event.nbytes
            self.stats.fused_tensors += event.tensors if event.tensors > 1 else 0
            self.stats.in_place += event.in_place
        lanes: set[int] = set()
        for request in requests:
            for trace, lane in request.sinks:
                if id(lane) not in lanes:
                    lanes.add(id(lane))
                    lane.record(trace, event)
        if self._timeline is not None:
            self._timeline.write(event, self.label)

    def _communication_error(self, exc: CommunicationError,
                             requests: Sequence[Request] = ()) -> OpError:
        names = sorted({r.name for q in self._pending.values() for r in q})
        names += [r.name for r in self._new] + [r.name for r in requests]
        what = f"collectives {names}" if names else "a collective"
        peers = self.comm.peer_status()
        status = "; ".join(f"rank {r}: {p.detail}" for r, p in sorted(peers.items())) or "n/a"
        dead = {r for r, p in peers.items() if p.alive is False}
        idle = {r for r, p in peers.items() if p.alive and p.busy is False}
        known = set(exc.missing or ())
        if exc.timed_out:
            unsubmitted = {m for key in self._pending for m in self._table.missing_ranks(key)}
            stalled = sorted(unsubmitted | known | dead | idle)
            return DeadlineExceededError(None, None, (
                f"Rank {self.rank}: {what} timed out after {self.timeout_s:g}s (stalled ranks: "
                f"{stalled or 'unknown'}; they did not join). Peer status: {status}. Every rank "
                "must run the same collectives; raise FLOWMESH_COLLECTIVE_TIMEOUT_S if they are "
                f"just slow. ({exc})"))
        lost = sorted(dead | known)
        return UnavailableError(None, None, (
            f"Rank {self.rank}: lost ranks {lost or 'unknown'} while running {what}. Peer "
            f"status: {status}. A rank exited or died; check its log. ({exc})"))

    def _fail_all(self, error: OpError, in_cycle: Sequence[Request] = ()) -> None:
        """Breaks the engine: fails every unfinished request, queued, pending or taken by
        the failed cycle (a speculative cycle holds its request outside the queues)."""
        with self._cv:
            self._failure = error
            requests = [r for q in self._pending.values() for r in q] + self._new
            requests += self.streams.take_in_flight()
            self._pending.clear()
            self._new = []
            self._pending_count = 0
        queued = {id(r) for r in requests}
        requests += [r for r in in_cycle if id(r) not in queued and not r.handle.done()]
        for request in requests:
            request.handle.fail(error)


def _next_capacity(messages: list[bytes]) -> int:
    """The next control round's slot size: this round's longest message, rounded up to a
    power of two (equal on every rank, since every rank saw the same messages). Steady
    training repeats its messages, so inline payloads then take a single round."""
    longest = max(len(m) for m in messages) + 4
    return min(max(1 << (longest - 1).bit_length(), _MIN_CAPACITY), _MAX_CAPACITY)
