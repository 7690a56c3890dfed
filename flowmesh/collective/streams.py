"""Streams: steady all-reduces that start the moment they are submitted.

A training loop submits the same collectives every step: each gradient bucket of
``DistributedOptimizer`` is one key with the same shapes every time. Negotiating each
again costs a control round trip *and* a hand-off to the engine thread, which under load
(busy cores) delays a bucket's transfer (measured in ``benchmarks/RESULTS.md``).

Once a key's all-reduce has been negotiated :data:`STEADY_AFTER` times in a row with the
same descriptor on every rank, every rank (deciding alike, in the same cycle) moves that
key to a :class:`Stream`: a channel of its own (``Communicator.channel``: separate
connections, so its transfers are ordered only among themselves, whatever other keys
do) on which each later request of the key is *started by the submitting thread* and
finished by the thread that waits for it. The transfers are speculative all-reduces
(``speculation.py``): a header says whether the rank's request still matches the agreed
descriptor, the sizes always agree, so a changed request (a new shape, another
reduction) costs one wasted transfer, after which every rank stops streaming that key and
the request is negotiated as usual (mismatches then fail with the usual report). A rank
that stops submitting the key while the others go on makes them fail after the collective
timeout, naming the collective.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flowmesh.collective.backends.base import Communicator, ReduceOp
from flowmesh.collective.fusion import BufferPool
from flowmesh.collective.negotiation import Descriptor
from flowmesh.collective.request import Request
from flowmesh.collective.speculation import Guess, Layout, can_speculate, deliver, lay_out
from flowmesh.collective.timeline import Event

STEADY_AFTER = 2  # negotiated cycles with the same descriptor before a key streams
MAX_STREAMS = 16  # channels per engine: each holds its own connections and gloo threads


class Stream:
    """One key's steady all-reduce on its own channel.

    Requests of the key go through it one at a time, in submission order: starting a
    request first finishes the previous one if nobody has yet, so every rank knows
    whether the stream still runs before it starts the next transfer.
    """

    def __init__(self, channel: Communicator, expected: Descriptor,
                 record: Callable[[Event, list[Request]], None]):
        self.channel = channel
        self.guess = Guess(expected, channel.size)
        self._pool = BufferPool(max_buffers=2)
        self._record = record
        self._lock = threading.Lock()
        self._in_flight: tuple[Request, Layout, Callable[[], None], float] | None = None
        self.stopped = False  # a rank's request differed: negotiate the key from now on

    def start(self, request: Request) -> tuple[bool, Request | None]:
        """Starts ``request``'s transfers unless the stream has stopped.

        Returns:
            ``(started, unmatched)``: whether ``request`` is on its way, and the previous
            request when it had to be finished here and did not match on every rank (the
            caller negotiates both then, that one first).

        Raises:
            CommunicationError: the channel failed (a peer died or timed out).
        """
        with self._lock:
            unmatched = self._finish_locked()
            if self.stopped:
                return False, unmatched
            start = time.perf_counter()
            layout = lay_out(self._pool, self.guess, request)
            wait = self.channel.start_allreduce_each(layout.transfers, ReduceOp.SUM, layout.sources)
            self._in_flight = (request, layout, wait, start)
            return True, unmatched

    def finish(self, request: Request) -> Request | None:
        """Finishes ``request`` if it is still in flight; returns it when it did not match
        on every rank (the caller negotiates it), else None."""
        with self._lock:
            if self._in_flight is None or self._in_flight[0] is not request:
                return None
            return self._finish_locked()

    def _finish_locked(self) -> Request | None:
        if self._in_flight is None:
            return None
        request, layout, wait, start = self._in_flight
        self._in_flight = None
        wait()
        if deliver(self.guess, layout, request, self.channel.size, start, self._record):
            return None
        self.stopped = True
        return request

    def close(self) -> None:
        self.channel.close()


def streamable(descriptor: Descriptor, inline: bool) -> bool:
    """Whether a negotiated collective may move to a stream once steady: not one whose data
    fits in the negotiation message (``inline``), which then takes a single round trip
    already, and is not worth a channel of its own."""
    return not inline and can_speculate(descriptor)
