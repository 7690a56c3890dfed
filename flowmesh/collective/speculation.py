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

In a group of two the header travels beside the data instead, as a second all-reduce
that runs concurrently with it (it costs no extra time then; measured on gloo), and a
rank that donated its lone contiguous tensor reduces it in place, without the copy into
the buffer. That is safe only with two ranks: a rank whose request did not match
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

import torch

from flowmesh.collective.backends.base import Communicator, ReduceOp
from flowmesh.collective.fusion import BufferPool, pack_into, unpack
from flowmesh.collective.negotiation import Descriptor
from flowmesh.collective.request import Request
from flowmesh.collective.timeline import Event

CHUNKS = 16  # a 64-bit hash in 4-bit chunks
HEADER = 1 + CHUNKS
MAX_BYTES = 8 << 20  # larger transfers dwarf a round trip; a wrong guess would waste one
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


def run_speculative(comm: Communicator, pool: BufferPool, expected: Descriptor,
                    candidate: Request, record: Callable[[Event, list[Request]], None]) -> bool:
    """One speculative cycle with this rank's next request ``candidate``.

    Returns:
        True when every rank's request matched ``expected`` (``candidate`` is complete),
        False when the guess was wrong (nothing was completed; negotiate normally).
    """
    start = time.perf_counter()
    chunks = _hash_chunks(expected)
    matched = candidate.descriptor == expected
    layout = _header_beside if comm.size == 2 else _header_inside
    transfers, header, data = layout(pool, expected, candidate, matched, chunks)
    comm.allreduce_each(transfers, ReduceOp.SUM)
    size = comm.size
    if header.to(torch.float64).tolist() != [float(size)] + [float(size * c) for c in chunks]:
        return False
    if expected.op == "mean":
        if data.is_floating_point():
            data.div_(size)
        else:
            data.copy_(torch.div(data, size, rounding_mode="floor"))
    for i, out in enumerate(unpack(data, [shape for _, shape in expected.specs])):
        candidate.handle.set_output(i, out)
    in_place = matched and data.data_ptr() == candidate.tensors[0].data_ptr()
    moved = sum(t.numel() * t.element_size() for t in transfers)
    record(Event("allreduce", [candidate.name], moved, start, time.perf_counter(),
                 len(candidate.tensors), speculative=True, in_place=in_place), [candidate])
    return True


def _header_inside(pool: BufferPool, expected: Descriptor, candidate: Request, matched: bool,
                   chunks: list[int]) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """One transfer ``[header | data]`` (any group size); returns it and both parts."""
    dtype = getattr(torch, expected.specs[0][0])
    device = candidate.tensors[0].device if matched else torch.device(expected.device)
    buf = pool.take(HEADER + _total(expected), dtype, device)
    buf[:HEADER] = _header_values(matched, chunks).to(dtype)
    if matched:
        pack_into(candidate.tensors, buf[HEADER:])
    return [buf], buf[:HEADER], buf[HEADER:]


def _header_beside(pool: BufferPool, expected: Descriptor, candidate: Request, matched: bool,
                   chunks: list[int]) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """A CPU header and the data as two transfers (groups of two): a donated lone
    contiguous tensor is the data itself; a rank that did not match contributes ``-0.0``."""
    header = _header_values(matched, chunks)
    tensors = candidate.tensors
    if matched and candidate.donated and len(tensors) == 1 and tensors[0].is_contiguous():
        data = tensors[0].view(-1)
        return [header, data], header, data
    dtype = getattr(torch, expected.specs[0][0])
    device = tensors[0].device if matched else torch.device(expected.device)
    data = pool.take(_total(expected), dtype, device)
    if matched:
        pack_into(tensors, data)
    else:
        data.fill_(-0.0 if data.is_floating_point() else 0)
    return [header, data], header, data


def _header_values(matched: bool, chunks: list[int]) -> torch.Tensor:
    if not matched:
        return torch.zeros(HEADER, dtype=torch.float64)
    return torch.tensor([1.0] + [float(c) for c in chunks], dtype=torch.float64)


def _total(expected: Descriptor) -> int:
    return sum(_numel(shape) for _, shape in expected.specs)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
