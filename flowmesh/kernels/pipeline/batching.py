"""Batching stages: batch, padded_batch, unbatch, window."""

from __future__ import annotations

import collections
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import (
    Block,
    DatasetDef,
    Element,
    as_value,
    block_rows,
    dim0,
    from_block,
    stack,
    to_block,
)
from flowmesh.kernels.pipeline.context import PipelineContext
from flowmesh.kernels.pipeline.sources import TensorSliceDataset, component_slice


def _check_size(name: str, what: str, value: int) -> int:
    if value <= 0:
        raise InvalidArgumentError(f"{name}: {what} must be greater than zero, got {value}")
    return value


def _batches(source: Iterator[Element], size: int, drop_remainder: bool) -> Iterator[list[Element]]:
    batch: list[Element] = []
    for element in source:
        batch.append(element)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not drop_remainder:
        yield batch


class BatchDataset(DatasetDef):
    """``batch(batch_size, drop_remainder)``: components stacked along a new first axis."""

    def __init__(self, name: str, source: DatasetDef, batch_size: int, drop_remainder: bool):
        self.name = name
        self.source = source
        self.batch_size = _check_size(f"BatchDataset '{name}'", "batch_size", batch_size)
        self.drop_remainder = drop_remainder

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        blocks = self.source.blocks(ctx)
        if blocks is not None:
            yield from _block_batches(blocks, self.batch_size, self.drop_remainder)
            return
        stage = f"BatchDataset '{self.name}'"
        for batch in _batches(self.source.iterate(ctx), self.batch_size, self.drop_remainder):
            yield tuple(stack([e[i] for e in batch], i, stage) for i in range(len(batch[0])))


def _block_batches(blocks: Iterator[Block], size: int, drop_remainder: bool) -> Iterator[Element]:
    """Batches cut out of blocks (``DatasetDef.blocks``): rows of each component's array."""
    pending: list[Block] = []
    count = 0
    try:
        for block in blocks:
            pending.append(block)
            count += block_rows(block)
            if count < size:
                continue
            joined = _joined(pending)
            whole = count - count % size
            for start in range(0, whole, size):
                yield tuple(from_block(c[start:start + size]) for c in joined)
            pending, count = [tuple(c[whole:] for c in joined)], count - whole
    finally:
        blocks.close()
    if count and not drop_remainder:
        yield tuple(from_block(c) for c in _joined(pending))


def _joined(blocks: list[Block]) -> Block:
    if len(blocks) == 1:
        return blocks[0]
    return tuple(np.concatenate(columns) for columns in zip(*blocks))


class PaddedBatchDataset(DatasetDef):
    """``padded_batch``: each component padded to ``padded_shapes`` (``-1``: the longest
    in the batch) with its padding value, then stacked."""

    def __init__(self, name: str, source: DatasetDef, batch_size: int,
                 padded_shapes: Sequence[Sequence[int]], padding_values: Sequence[Any],
                 drop_remainder: bool):
        self.name = name
        self.source = source
        self.batch_size = _check_size(f"PaddedBatchDataset '{name}'", "batch_size", batch_size)
        self.padded_shapes = [list(s) for s in padded_shapes]
        self.padding_values = list(padding_values)
        self.drop_remainder = drop_remainder

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for batch in _batches(self.source.iterate(ctx), self.batch_size, self.drop_remainder):
            yield tuple(self._pad(i, [as_value(e[i]) for e in batch]) for i in range(len(batch[0])))

    def _pad(self, i: int, values: list[Any]) -> Any:
        wanted = self.padded_shapes[i]
        shapes = [tuple(v.shape) for v in values]
        if any(len(s) != len(wanted) for s in shapes):
            raise InvalidArgumentError(
                f"PaddedBatchDataset '{self.name}': component {i} has rank "
                f"{len(shapes[0])} but padded_shapes gives {wanted}")
        target = []
        for axis, want in enumerate(wanted):
            longest = max((s[axis] for s in shapes), default=0)
            if want >= 0 and longest > want:
                raise InvalidArgumentError(
                    f"PaddedBatchDataset '{self.name}': attempted to pad component {i} to a "
                    f"smaller size: dimension {axis} is {longest}, padded_shapes says {want}")
            target.append(want if want >= 0 else longest)
        pad = self.padding_values[i]
        if isinstance(values[0], torch.Tensor):
            out = torch.full((len(values), *target), pad.item() if isinstance(pad, torch.Tensor)
                             else pad, dtype=values[0].dtype)
        else:
            fill = pad[()] if isinstance(pad, np.ndarray) else pad
            out = np.full((len(values), *target), fill, dtype=object)
        for row, value in enumerate(values):
            out[(row, *(slice(0, n) for n in value.shape))] = value
        return out


class UnbatchDataset(DatasetDef):
    """``unbatch``: every row of every element's components."""

    def __init__(self, name: str, source: DatasetDef, dense: bool = False):
        self.name = name
        self.source = source
        self.dense = dense  # every component a tensor of one static element shape

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for element in self.source.iterate(ctx):
            for row in range(self._rows(element)):
                yield tuple(component_slice(v, row) for v in element)

    def blocks(self, ctx: PipelineContext) -> Iterator[Block] | None:
        """Each input element is a block already (when its components are dense)."""
        return self._blocks(ctx) if self.dense else None

    def _blocks(self, ctx: PipelineContext) -> Iterator[Block]:
        for element in self.source.iterate(ctx):
            self._rows(element)
            yield tuple(to_block(v) for v in element)

    def _rows(self, element: Element) -> int:
        stage = f"UnbatchDataset '{self.name}'"
        sizes = {dim0(v, i, stage) for i, v in enumerate(element)}
        if len(sizes) > 1:
            raise InvalidArgumentError(
                f"{stage}: input components have different batch sizes {sorted(sizes)}")
        return sizes.pop() if sizes else 0


class WindowDataset(DatasetDef):
    """``window(size, shift, stride, drop_remainder)``: each element is a tuple of nested
    datasets (one per component) holding ``size`` input elements ``stride`` apart; windows
    start every ``shift`` elements."""

    def __init__(self, name: str, source: DatasetDef, size: int, shift: int, stride: int,
                 drop_remainder: bool):
        stage = f"WindowDataset '{name}'"
        self.name = name
        self.source = source
        self.size = _check_size(stage, "size", size)
        self.shift = _check_size(stage, "shift", shift)
        self.stride = _check_size(stage, "stride", stride)
        self.drop_remainder = drop_remainder

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        span = (self.size - 1) * self.stride + 1
        buffer: collections.deque[Element] = collections.deque()
        source = self.source.iterate(ctx)
        exhausted = False
        while True:
            while not exhausted and len(buffer) < span:
                try:
                    buffer.append(next(source))
                except StopIteration:
                    exhausted = True
            if not buffer:
                return
            window = list(buffer)[::self.stride][:self.size]
            if len(window) < self.size and (self.drop_remainder or exhausted and not window):
                return
            yield self._nested(window)
            popped = min(self.shift, len(buffer))
            for _ in range(popped):
                buffer.popleft()
            for _ in range(self.shift - popped):  # a shift longer than the window
                if exhausted or next(source, None) is None:
                    exhausted = True
                    break
            if exhausted and not buffer:
                return

    def _nested(self, window: list[Element]) -> Element:
        stage = f"WindowDataset '{self.name}'"
        return tuple(TensorSliceDataset(f"{self.name}/window", [stack([e[i] for e in window], i, stage)])
                     for i in range(len(window[0])))
