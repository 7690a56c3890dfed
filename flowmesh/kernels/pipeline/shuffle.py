"""``shuffle(buffer_size, seed, reshuffle_each_iteration)`` with TensorFlow's buffer semantics.

The stage fills a buffer with the first ``buffer_size`` input elements, then repeatedly
outputs a uniformly chosen buffered element and puts the next input element in its slot;
once the input ends it drains the buffer in random order. Output ``k`` therefore always
comes from the first ``k + buffer_size`` inputs, and the stage never holds more than
``buffer_size`` elements (memory stays bounded over any number of epochs).

Seeds: the op's ``(seed, seed2)`` come from TensorFlow's graph/op seed rules
(``ops/random_ops.get_seed``); both zero means "no seed": the pipeline draws random seeds
once per iterator initialisation. With ``reshuffle_each_iteration`` each pass (each epoch
under ``repeat``) uses the next seed of the iterator's sequence; without it every pass
repeats the first pass's order. Re-initialising an iterator starts the sequence again.
The random numbers (NumPy's PCG64 seeded with ``(seed, seed2, pass)``) are not
TensorFlow's Philox stream, so orders differ from TensorFlow's for the same seed (the
element multiset and the buffer bound are the same). Inputs that come in blocks (file
records, dense ``unbatch``) shuffle a block at a time (:meth:`ShuffleDataset.blocks`),
drawing the same slots, so both ways give the same order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import Block, DatasetDef, Element, block_rows
from flowmesh.kernels.pipeline.context import PipelineContext

_DRAW_CHUNK = 1024
_SEED_MASK = (1 << 64) - 1


class _Epochs:
    """Per-iterator seed state of one shuffle stage."""

    def __init__(self, seed: int, seed2: int):
        if seed == 0 and seed2 == 0:
            seed, seed2 = (int.from_bytes(os.urandom(8), "little") for _ in range(2))
        self.base = (seed & _SEED_MASK, seed2 & _SEED_MASK)
        self.count = 0

    def next_rng(self, reshuffle: bool) -> np.random.Generator:
        epoch = self.count if reshuffle else 0
        self.count += 1
        return np.random.Generator(np.random.PCG64([*self.base, epoch]))


class _Slots:
    """The buffer slots a pass replaces, uniform in ``[0, buffer_size)``: drawn in chunks of
    ``_DRAW_CHUNK`` whether they are taken one at a time or many at once, so both ways of
    shuffling see the same sequence (and so the same order)."""

    def __init__(self, rng: np.random.Generator, size: int):
        self._rng, self._size = rng, size
        self._chunk = np.empty(0, np.int64)
        self._list: list[int] = []
        self._at = 0

    def _refill(self) -> None:
        self._chunk = self._rng.integers(0, self._size, _DRAW_CHUNK)
        self._list = self._chunk.tolist()
        self._at = 0

    def one(self) -> int:
        if self._at == _DRAW_CHUNK or not self._list:
            self._refill()
        self._at += 1
        return self._list[self._at - 1]

    def take(self, count: int) -> np.ndarray:
        parts = []
        while count:
            if self._at == _DRAW_CHUNK or not self._list:
                self._refill()
            n = min(count, _DRAW_CHUNK - self._at)
            parts.append(self._chunk[self._at:self._at + n])
            self._at += n
            count -= n
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


class ShuffleDataset(DatasetDef):
    """Randomly shuffles its input through a buffer of ``buffer_size`` elements."""

    def __init__(self, name: str, source: DatasetDef, buffer_size: int, seed: int, seed2: int,
                 reshuffle: bool):
        if buffer_size <= 0:
            raise InvalidArgumentError(
                f"ShuffleDataset '{name}': buffer_size must be greater than zero, got "
                f"{buffer_size}")
        self.name = name
        self.source = source
        self.buffer_size = buffer_size
        self.seeds = (seed, seed2)
        self.reshuffle = reshuffle

    def _pass_rng(self, ctx: PipelineContext) -> np.random.Generator:
        return ctx.state(self, lambda: _Epochs(*self.seeds)).next_rng(self.reshuffle)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        rng = self._pass_rng(ctx)
        slots = _Slots(rng, self.buffer_size)
        buffer: list[Element] = []
        size = self.buffer_size
        source = self.source.iterate(ctx)
        try:
            for element in source:
                if len(buffer) < size:
                    buffer.append(element)
                    if len(buffer) == size:
                        ctx.record_max("shuffle_buffer", size)
                    continue
                i = slots.one()
                out = buffer[i]
                buffer[i] = element
                yield out
        finally:
            source.close()
        ctx.record_max("shuffle_buffer", len(buffer))
        for i in rng.permutation(len(buffer)).tolist():
            yield buffer[i]

    def blocks(self, ctx: PipelineContext) -> Iterator[Block] | None:
        blocks = self.source.blocks(ctx)
        return None if blocks is None else self._shuffle_blocks(ctx, blocks)

    def _shuffle_blocks(self, ctx: PipelineContext, blocks: Iterator[Block]) -> Iterator[Block]:
        """:meth:`iterate` a block at a time: the same slots, so the same order."""
        rng = self._pass_rng(ctx)
        slots = _Slots(rng, self.buffer_size)
        buffer = _Buffer(self.buffer_size)
        try:
            for block in blocks:
                taken = buffer.fill(block)
                if taken and buffer.full:
                    ctx.record_max("shuffle_buffer", buffer.filled)
                rows = block_rows(block) - taken
                if rows:
                    yield _exchange(buffer.columns, slots.take(rows),
                                    tuple(c[taken:] for c in block))
        finally:
            blocks.close()
        ctx.record_max("shuffle_buffer", buffer.filled)
        if buffer.filled:
            order = rng.permutation(buffer.filled)
            yield tuple(c[:buffer.filled][order] for c in buffer.columns)


class _Buffer:
    """The block shuffle's buffer: one array per component, grown as it fills (never
    beyond ``size`` rows, and no larger than twice what the input held)."""

    def __init__(self, size: int):
        self.size = size
        self.filled = 0
        self.columns: Block = ()

    @property
    def full(self) -> bool:
        return self.filled == self.size

    def fill(self, block: Block) -> int:
        """Appends the rows of ``block`` that fit; returns how many it took."""
        taken = min(self.size - self.filled, block_rows(block))
        if not taken:
            return 0
        end = self.filled + taken
        if not self.columns or end > len(self.columns[0]):
            capacity = min(self.size, max(2 * end, 1024))
            self.columns = tuple(_grown(old, c, capacity, self.filled) for old, c in
                                 zip(self.columns or (None,) * len(block), block))
        for column, rows in zip(self.columns, block):
            column[self.filled:end] = rows[:taken]
        self.filled = end
        return taken


def _grown(old: np.ndarray | None, like: np.ndarray, capacity: int, filled: int) -> np.ndarray:
    grown = np.empty((capacity, *like.shape[1:]), dtype=like.dtype)
    if old is not None:
        grown[:filled] = old[:filled]
    return grown


def _exchange(buffer: Block, slots: np.ndarray, incoming: Block) -> Block:
    """Row ``t`` of ``incoming`` takes the place of row ``slots[t]`` of ``buffer``, which
    is output, in turn, ``t = 0, 1, ...``; returns the outputs in order (``buffer``'s
    columns are updated). An output is the buffer's old row unless an earlier incoming one
    took that slot in this block: then it is the latest such one."""
    order = np.argsort(slots, kind="stable")  # by slot, then by time
    ordered = slots[order]
    first = np.empty(len(order), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    head = order[first]
    later = np.flatnonzero(~first)
    replaced, replacing = order[later], order[later - 1]
    last = np.empty(len(order), dtype=bool)
    last[-1] = True
    last[:-1] = first[1:]
    tail = order[last]
    head_slots, tail_slots = slots[head], slots[tail]
    out = []
    for column, rows in zip(buffer, incoming):
        taken = np.empty((len(order), *rows.shape[1:]), dtype=rows.dtype)
        taken[head] = column[head_slots]
        taken[replaced] = rows[replacing]
        column[tail_slots] = rows[tail]
        out.append(taken)
    return tuple(out)
