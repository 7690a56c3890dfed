"""An out-of-place ring all-reduce (sum) over point-to-point sends.

gloo's all-reduce works in place, so reducing a tensor the caller still needs (a live
input) costs a copy into the output buffer first, which at 10 Gbit/s on a few cores is a
tenth of the collective's time. This ring reads the input and writes only the output: the
reduce-scatter adds the received partial sums to the *input*'s segment straight into the
output (``out = x + received``), the all-gather receives into the output, so the copy is
folded into work the ring does anyway.

The tensor is cut into one segment per member and each segment into a few chunks; a chunk
moves on as soon as it is ready (sent right after its addition, forwarded right after it
arrives), so additions overlap transfers as in gloo's own pipelined ring. Every member
ends with the same bits: each segment is summed once, by its owner, and copied to the
others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

CHUNK_BYTES = 2 << 20  # the pipeline's unit; a chunk costs a few Python calls
MAX_CHUNKS = 8

Wait = Callable[[Any], None]


class RingAllreduce:
    """One out-of-place sum of ``source`` into ``output`` (flat, same size and dtype,
    contiguous, on the CPU) over ``group``'s point-to-point sends, as member ``rank`` of
    ``size`` (>= 2); ``source`` may be ``output`` itself (in place). :meth:`start` posts the first transfers; :meth:`finish` drives the
    ring to the end, waiting for each transfer with ``wait`` (which raises on a dead peer
    or a timeout). ``scratch(i, numel, dtype)`` lends scratch buffer ``i`` (0 or 1) of at
    least ``numel`` elements: the caller keeps them between collectives, since fresh large
    buffers cost page faults."""

    def __init__(self, group: Any, source: torch.Tensor, output: torch.Tensor, rank: int,
                 size: int, scratch: Callable[[int, int, torch.dtype], torch.Tensor],
                 slot: int = 0):
        self._group = group
        self._x = source
        self._out = output
        self._rank = rank
        self._size = size
        self._right = (rank + 1) % size
        self._left = (rank - 1) % size
        self._segments = _split(source.numel(), size)
        largest = max(length for _, length in self._segments)
        self._chunks = max(1, min(MAX_CHUNKS, source.element_size() * largest // CHUNK_BYTES))
        self._scratch = [scratch(2 * slot + i, largest, source.dtype) for i in range(min(2, size - 1))]
        self._tag_base = slot << 24  # rings of one batch run together: tags and scratch apart
        self._steps = 2 * (size - 1)  # reduce-scatter, then all-gather
        self._sends: list[Any] = []
        self._receives: list[list[tuple[Any, torch.Tensor]]] = []

    def start(self) -> None:
        """Posts step 0: this member's receives, and the sends of its own segment."""
        self._post_receives(0)
        for chunk, (start, n) in enumerate(self._pieces(self._rank)):
            self._send(self._x[start:start + n], 0, chunk)

    def finish(self, wait: Wait) -> None:
        """Runs every step and waits for every transfer."""
        for step in range(self._steps):
            if step + 1 < self._steps:
                self._post_receives(step + 1)
            reduce = step < self._size - 1
            for chunk, (start, n) in enumerate(self._pieces(self._received_segment(step))):
                work, landed = self._receives[step][chunk]
                wait(work)
                out = self._out[start:start + n]
                if reduce:  # the partial sum so far plus this member's input
                    torch.add(self._x[start:start + n], landed, out=out)
                if step + 1 < self._steps:
                    self._send(out, step + 1, chunk)
        for work in self._sends:
            wait(work)

    def _pieces(self, segment: int) -> list[tuple[int, int]]:
        """``(start, length)`` of each chunk of ``segment`` in the flat tensor."""
        start, length = self._segments[segment % self._size]
        return [(start + s, n) for s, n in _split(length, self._chunks)]

    def _received_segment(self, step: int) -> int:
        """The segment this member receives at ``step`` from its left neighbour: partial
        sums during the reduce-scatter, finished segments during the all-gather."""
        if step < self._size - 1:
            return self._rank - step - 1
        return self._rank - (step - (self._size - 1))

    def _post_receives(self, step: int) -> None:
        """Receives of ``step``: into a scratch buffer (alternating, so a step's receives
        never land where the previous step's additions still read) or, in the all-gather,
        straight into the output."""
        segment = self._received_segment(step)
        first = self._segments[segment % self._size][0]
        posted = []
        for chunk, (start, n) in enumerate(self._pieces(segment)):
            if step < self._size - 1:
                target = self._scratch[step % 2][start - first:start - first + n]
            else:
                target = self._out[start:start + n]
            tag = self._tag_base + step * self._chunks + chunk
            posted.append((self._group.recv([target], self._left, tag), target))
        self._receives.append(posted)

    def _send(self, tensor: torch.Tensor, step: int, chunk: int) -> None:
        self._sends.append(self._group.send([tensor], self._right,
                                            self._tag_base + step * self._chunks + chunk))


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    """``(start, length)`` of ``parts`` consecutive pieces of ``n`` items, the first ones
    one longer when ``parts`` does not divide ``n``."""
    base, extra = divmod(n, parts)
    pieces = []
    start = 0
    for i in range(parts):
        length = base + (1 if i < extra else 0)
        pieces.append((start, length))
        start += length
    return pieces
