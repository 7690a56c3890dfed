"""Which keys of an engine stream, and the requests in flight on their streams.

A key whose all-reduce was negotiated :data:`~flowmesh.collective.streams.STEADY_AFTER`
times in a row with one descriptor on every rank moves to a
:class:`~flowmesh.collective.streams.Stream` (every rank decides alike, in the same
cycle, from the identical negotiation table). Its requests then skip the engine: the
submitting thread starts the transfer and the waiting thread finishes it. A request
that no longer matches stops the key's stream on every rank after that transfer; it is
negotiated again and may stream again after twice as many steady cycles.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.collective.backends.base import CommunicationError, Communicator
from flowmesh.collective.negotiation import Descriptor
from flowmesh.collective.request import Handle, Request
from flowmesh.collective.streams import MAX_STREAMS, STEADY_AFTER, Stream, streamable
from flowmesh.collective.timeline import Event


class StreamManager:
    """The streams of one engine.

    Args:
        comm: the engine's communicator (``channel`` gives a stream its connections).
        lock: the engine's condition (guards the maps shared with submitting threads).
        record: records a streamed transfer (stats, trace lanes, timeline).
        requeue: puts requests back for negotiation (waking the engine thread).
        fail: breaks the engine on a communication failure of a stream.
    """

    def __init__(self, comm: Communicator, lock: threading.Condition,
                 record: Callable[[Event, Sequence[Request]], None],
                 requeue: Callable[[list[Request]], None],
                 fail: Callable[[CommunicationError, list[Request]], None]):
        self._comm = comm
        self._lock = lock
        self._record = record
        self._requeue = requeue
        self._fail = fail
        self.active: dict[str, Stream] = {}  # key -> its stream
        self._retired: list[Stream] = []  # stopped streams (channels closed with the engine)
        self._in_flight: dict[int, tuple[Stream, Request]] = {}  # id(handle) -> in flight
        self._steady: dict[str, tuple[Descriptor, int]] = {}  # key -> last descriptor, count
        self._steady_needed: dict[str, int] = {}  # doubles for a key whose stream stopped
        self._channels_left = MAX_STREAMS  # counted in cycles: every rank agrees
        self._generations: dict[str, int] = {}  # channels opened per key

    def note_steady(self, item: Any, pending_elsewhere: bool) -> None:
        """Counts a key's consecutive negotiated all-reduces with one descriptor on every
        rank and opens its stream when the count is reached. Runs before the cycle
        completes the request, so the key's next request, which its submitter sends only
        after this one completed, already takes the stream."""
        key, descriptor = item.key, item.descriptors[0]
        steady = (self._comm.size > 1 and self._channels_left > 0
                  and len(set(item.descriptors)) == 1
                  and streamable(descriptor, any(item.inline))
                  and not pending_elsewhere and key not in self.active)
        if not steady:
            self._steady.pop(key, None)
            return
        last, count = self._steady.get(key, (None, 0))
        count = count + 1 if last == descriptor else 1
        self._steady[key] = (descriptor, count)
        if count < self._steady_needed.get(key, STEADY_AFTER):
            return
        generation = self._generations.get(key, 0)  # counted in cycles only: alike everywhere
        self._generations[key] = generation + 1
        channel = self._comm.channel(f"{key}#{generation}")
        if channel is None:  # the backend has no channels: negotiate every collective
            self._channels_left = 0
            return
        self._channels_left -= 1
        with self._lock:
            self.active[key] = Stream(channel, descriptor, self._record)
        del self._steady[key]

    def start(self, stream: Stream, request: Request) -> None:
        """Starts ``request`` on its key's stream (the submitting thread)."""
        with self._lock:
            self._in_flight[id(request.handle)] = (stream, request)
        try:
            started, unmatched = stream.start(request)
        except CommunicationError as exc:
            self._fail(exc, [request])
            return
        if not started or unmatched is not None:
            self._stop(stream, [unmatched] if unmatched is not None else [])
        if not started:
            with self._lock:
                self._in_flight.pop(id(request.handle), None)
            self._requeue([request])

    def finish(self, handle: Handle) -> None:
        """Finishes the streamed request of ``handle``, if any (the waiting thread)."""
        with self._lock:
            found = self._in_flight.pop(id(handle), None)
        if found is None:
            return
        stream, request = found
        try:
            unmatched = stream.finish(request)
        except CommunicationError as exc:
            self._fail(exc, [request])
            return
        if unmatched is not None:
            self._stop(stream, [unmatched])

    def _stop(self, stream: Stream, unmatched: list[Request]) -> None:
        """A rank's request differed from the stream's: every rank stops streaming the key
        after the same transfer; it is negotiated again."""
        key = stream.guess.expected.key
        with self._lock:
            if self.active.get(key) is stream:
                del self.active[key]
                self._retired.append(stream)
                self._steady_needed[key] = min(2 * self._steady_needed.get(key, STEADY_AFTER), 64)
        self._requeue(unmatched)

    def take_in_flight(self) -> list[Request]:
        """Forgets and returns the requests in flight (the engine broke; caller holds the lock)."""
        requests = [r for _, r in self._in_flight.values()]
        self._in_flight.clear()
        return requests

    def close(self) -> None:
        for stream in list(self.active.values()) + self._retired:
            stream.close()
