"""Speculative all-reduce: one round trip per step for a training loop in steady state.

A negotiated collective costs two round trips: the control all-gather, then the data
transfer. A training loop whose every step is one identical all-reduce (one gradient
bucket) can skip the first: once two consecutive cycles negotiated that same single
all-reduce, every rank *agrees* (from identical negotiation state) that the next cycle is
speculative. In a speculative cycle every rank all-reduces a buffer of the agreed size
whose first :data:`HEADER` elements say whether the rank's next request really is that
collective (a flag and the descriptor's hash in 4-bit chunks, exact after a sum in any
float dtype). If every rank matched, the data part is the result; otherwise the cycle's
data is discarded, speculation stops on every rank at once, and the requests are
negotiated normally. The sizes always agree, so a wrong guess can never corrupt or abort
a transfer; it only wastes one transfer.

In a group of two, transfers of at least :data:`BESIDE_MIN_BYTES` send the largest tensor
as its own all-reduce, concurrently with ``[header | the other tensors]``: a rank that
donated that tensor (contiguous) reduces it in place, and a live one is reduced out of
place into a pooled buffer (the communicator may do that without copying it first).
On gloo two concurrent all-reduces cost no more than one for large data but
more for small data (figures in ``benchmarks/RESULTS.md``, "Figures moved out of
docstrings"), so smaller data is packed behind its header even when donated (the copy is
cheaper). The layout depends only
on the agreed shapes, never on one rank's request, so every rank makes the same calls.
In-place speculation is safe only with two ranks: a rank whose request did not match
contributes ``-0.0`` (zeros for integers), so after a wrong guess the one rank that did
match holds ``x + (-0.0) == x``, its tensor unchanged; with three ranks, two matching
ones would already hold each other's sum. After a wrong guess, twice as many matching
cycles (up to 64) are needed before the next one; twice that many right guesses in a row
halve the requirement again (down to 2), so a loop that runs another collective now and
then keeps speculating. Transfers above :data:`MAX_BYTES` (where a round trip is
negligible) never speculate.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from flowmesh.collective.backends.base import Communicator, ReduceOp
from flowmesh.collective.fusion import BufferPool, pack_into, unpack
from flowmesh.collective.negotiation import Descriptor
from flowmesh.collective.request import Request
from flowmesh.collective.timeline import Event

CHUNKS = 16  # a 64-bit hash in 4-bit chunks
HEADER = 1 + CHUNKS
MAX_BYTES = 8 << 20  # larger transfers dwarf a round trip; a wrong guess would waste one
BESIDE_MIN_BYTES = 2 << 20  # two ranks: header beside the data from here (see above)
_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def can_speculate(descriptor: Descriptor) -> bool:
    """Single-dtype SUM/MEAN all-reduces of a dtype whose small integers sum exactly, small
    enough that skipping the negotiation matters."""
    dtypes = {d for d, _ in descriptor.specs}
    return (descriptor.kind == "allreduce" and descriptor.op in ("sum", "mean")
            and len(dtypes) == 1 and dtypes <= set(_DTYPES) and descriptor.nbytes <= MAX_BYTES)


def _hash_chunks(descriptor: Descriptor) -> list[int]:
    digest = hashlib.blake2b(repr(descriptor.encode()).encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return [(value >> (4 * i)) & 0xF for i in range(CHUNKS)]


class Guess:
    """The collective every rank expects next, with what its speculative cycles reuse."""

    def __init__(self, expected: Descriptor, size: int):
        chunks = _hash_chunks(expected)
        self.expected = expected
        self.dtype: torch.dtype = getattr(torch, expected.specs[0][0])
        self.device = torch.device(expected.device)
        self.shapes = [shape for _, shape in expected.specs]
        self.numels = [_numel(shape) for shape in self.shapes]
        self.numel = sum(self.numels)
        self.largest = self.numels.index(max(self.numels))  # the first, on a tie
        nbytes = self.numel * torch.empty((), dtype=self.dtype).element_size()
        self.header_inside = size > 2 or nbytes < BESIDE_MIN_BYTES  # see the module docstring
        self._header = torch.tensor([1.0] + [float(c) for c in chunks], dtype=torch.float64)
        self._agreed = [float(size)] + [float(size * c) for c in chunks]

    def header(self, matched: bool) -> torch.Tensor:
        """This rank's header: the flag and the hash chunks, or zeros."""
        return self._header.clone() if matched else torch.zeros(HEADER, dtype=torch.float64)

    def agreed(self, reduced_header: torch.Tensor) -> bool:
        """Whether every rank's request matched, from the header summed over ranks."""
        return reduced_header.to(torch.float64).tolist() == self._agreed


def run_speculative(comm: Communicator, pool: BufferPool, guess: Guess, candidate: Request,
                    record: Callable[[Event, list[Request]], None]) -> bool:
    """One speculative cycle with this rank's next request ``candidate``.

    Returns:
        True when every rank's request matched ``guess`` (``candidate`` is complete),
        False when the guess was wrong (nothing was completed; negotiate normally).
    """
    start = time.perf_counter()
    layout = lay_out(pool, guess, candidate)
    comm.allreduce_each(layout.transfers, ReduceOp.SUM, layout.sources)
    return deliver(guess, layout, candidate, comm.size, start, record)


def lay_out(pool: BufferPool, guess: Guess, candidate: Request) -> Layout:
    """The transfers of one speculative all-reduce (summed by the caller) for ``candidate``,
    this rank's request: its data when it matches ``guess``, a filler otherwise."""
    matched = candidate.descriptor == guess.expected
    return (_header_inside if guess.header_inside else _header_beside)(pool, guess, candidate,
                                                                      matched)


def deliver(guess: Guess, layout: Layout, candidate: Request, size: int, start: float,
            record: Callable[[Event, list[Request]], None]) -> bool:
    """After the transfers were summed: completes ``candidate`` when every rank matched
    (True), else leaves it untouched for negotiation (False)."""
    if not guess.agreed(layout.header):
        return False
    if guess.expected.op == "mean":
        for part in layout.parts:
            if part.is_floating_point():
                part.div_(size)
            else:
                part.copy_(torch.div(part, size, rounding_mode="floor"))
    for i, out in enumerate(layout.outputs()):
        candidate.handle.set_output(i, out)
    moved = sum(t.numel() * t.element_size() for t in layout.transfers)
    record(Event("allreduce", [candidate.name], moved, start, time.perf_counter(),
                 len(candidate.tensors), speculative=True, in_place=layout.in_place), [candidate])
    return True


@dataclass
class Layout:
    """How one speculative cycle lays the header and the data out in its transfers."""

    transfers: list[torch.Tensor]  # all-reduced concurrently
    header: torch.Tensor  # the header's part of a transfer
    parts: list[torch.Tensor]  # the data's parts (scaled for a mean)
    outputs: Callable[[], list[torch.Tensor]]  # the results, once reduced
    in_place: bool  # the largest tensor was reduced where it lies, without a copy
    sources: list[torch.Tensor | None]  # per transfer: reduced out of place from this


def _header_inside(pool: BufferPool, guess: Guess, candidate: Request,
                   matched: bool) -> Layout:
    """One transfer ``[header | data]`` (any group size)."""
    device = candidate.tensors[0].device if matched else guess.device
    buf = pool.take(HEADER + guess.numel, guess.dtype, device)
    buf[:HEADER] = guess.header(matched).to(guess.dtype)
    if matched:
        pack_into(candidate.tensors, buf[HEADER:])
    data = buf[HEADER:]
    return Layout([buf], buf[:HEADER], [data], lambda: unpack(data, guess.shapes), False, [None])


def _header_beside(pool: BufferPool, guess: Guess, candidate: Request,
                   matched: bool) -> Layout:
    """Two concurrent transfers (groups of two): the largest tensor alone, reduced in place
    when it was donated and is contiguous, and ``[header | the other tensors]``. A rank that
    did not match contributes ``-0.0`` (zeros for integers) in both."""
    big = guess.largest
    device = candidate.tensors[0].device if matched else guess.device
    front = pool.take(HEADER + guess.numel - guess.numels[big], guess.dtype, device)
    front[:HEADER] = guess.header(matched).to(guess.dtype)
    rest = front[HEADER:]
    tensor = candidate.tensors[big] if matched else None
    in_place = tensor is not None and candidate.donates(big) and tensor.is_contiguous()
    source = None  # a live input is reduced out of place, not copied first (the backend's ring)
    if tensor is not None and in_place:
        alone = tensor.view(-1)
    else:
        alone = pool.take(guess.numels[big], guess.dtype, device)
        if tensor is not None:
            source = tensor.reshape(-1)
    if matched:
        others = [t for i, t in enumerate(candidate.tensors) if i != big]
        if others:
            pack_into(others, rest)
    else:
        filler = -0.0 if guess.dtype.is_floating_point else 0
        alone.fill_(filler)
        rest.fill_(filler)

    def outputs() -> list[torch.Tensor]:
        views = iter(unpack(rest, [s for i, s in enumerate(guess.shapes) if i != big]))
        lone = candidate.tensors[big] if in_place else alone.view(guess.shapes[big])
        return [lone if i == big else next(views) for i in range(len(guess.shapes))]

    return Layout([front, alone], front[:HEADER], [rest, alone], outputs, in_place, [None, source])


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
