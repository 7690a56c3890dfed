"""Kernels of the other queue kinds of ``flowmesh/ops/queue_kinds.py``.

Each is a :class:`~flowmesh.kernels.data_flow_ops.QueueState` with its own order or
batching rule, living in the resource store of its device like a ``FIFOQueue``:

=========================  ===========================================================
``PaddingFIFOQueueV2``     FIFO; a batch pads each component to the largest element
                           (zeros, or empty strings) where the shape has unknown dims
``RandomShuffleQueueV2``   a uniformly random element; until the queue is closed a
                           dequeue leaves at least ``min_after_dequeue`` elements
``PriorityQueueV2``        the element with the smallest int64 priority (component 0)
                           first; equal priorities in insertion order
=========================  ===========================================================
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any

import numpy as np
import torch

from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.data_flow_ops import QueueState, _stack
from flowmesh.kernels.pipeline.sparse_value import SparseValue


class PaddingFIFOQueueState(QueueState):
    """FIFO order; :meth:`stack` pads to the largest element of the batch."""

    kind = "PaddingFIFOQueue"

    def stack(self, values: list[Any], component: int) -> Any:
        shapes = [tuple(v.shape) for v in values]
        if len(set(shapes)) <= 1 or isinstance(values[0], SparseValue):
            return _stack(values)
        if len({len(s) for s in shapes}) > 1:
            raise InvalidArgumentError(
                f"PaddingFIFOQueue '{self.name}': component {component} has elements of different "
                f"ranks in one batch: {sorted(set(shapes))}")
        target = tuple(max(dims) for dims in zip(*shapes))
        return _stack([_pad(v, target) for v in values])


def _pad(value: Any, target: tuple[int, ...]) -> Any:
    if tuple(value.shape) == target:
        return value
    if isinstance(value, torch.Tensor):
        out = torch.zeros(target, dtype=value.dtype, device=value.device)
    else:  # strings: object arrays padded with b""
        out = np.full(target, b"", dtype=object)
    out[tuple(slice(0, d) for d in value.shape)] = value
    return out


class RandomShuffleQueueState(QueueState):
    """Dequeues take random elements and keep ``min_after_dequeue`` until closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name: str, dtypes: list[Any], shapes: list[Any], capacity: int,
                 min_after_dequeue: int, seed: int, seed2: int):
        super().__init__(name, dtypes, shapes, capacity)
        self.items: list[tuple[Any, ...]] = []  # type: ignore[assignment]
        self.min_after_dequeue = max(0, min_after_dequeue)
        self.rng = np.random.default_rng(None if seed == 0 and seed2 == 0 else [seed, seed2])

    def _available(self) -> int:
        if self.closed:
            return len(self.items)
        return max(0, len(self.items) - self.min_after_dequeue)

    def _take(self, count: int) -> list[tuple[Any, ...]]:
        """``count`` distinct elements uniformly at random (one draw), each removed by
        swapping the last element into its place (TensorFlow's removal)."""
        items = self.items
        chosen = self.rng.choice(len(items), count, replace=False).tolist()
        taken = [items[i] for i in chosen]
        for i in sorted(chosen, reverse=True):
            items[i] = items[-1]
            items.pop()
        return taken


class PriorityQueueState(QueueState):
    """A heap keyed by the int64 scalar in component 0 (ties: first in, first out)."""

    kind = "PriorityQueue"

    def __init__(self, name: str, dtypes: list[Any], shapes: list[Any], capacity: int):
        super().__init__(name, dtypes, shapes, capacity)
        self.items: list[tuple[int, int, tuple[Any, ...]]] = []  # type: ignore[assignment]
        self._order = itertools.count()

    def _put(self, element: tuple[Any, ...]) -> None:
        priority = element[0]
        if getattr(priority, "ndim", 0) != 0:
            raise InvalidArgumentError(
                f"PriorityQueue '{self.name}': the priority (component 0) must be a scalar, got shape "
                f"{list(priority.shape)}")
        heapq.heappush(self.items, (int(priority), next(self._order), element))

    def _take(self, count: int) -> list[tuple[Any, ...]]:
        return [heapq.heappop(self.items)[2] for _ in range(count)]


def _lookup(ctx: KernelContext, make: Any) -> Any:
    name = ctx.attr("shared_name") or ctx.op.name
    return ctx.device.resources.lookup_or_create(ctx.attr("container", ""), name, lambda: make(name))


def _spec(ctx: KernelContext) -> tuple[list[Any], list[Any], int]:
    return (list(ctx.attr("component_types")), list(ctx.attr("shapes") or []),
            int(ctx.attr("capacity", -1)))


@kernel("PaddingFIFOQueueV2")
def _padding_fifo_queue(ctx: KernelContext):
    state = _lookup(ctx, lambda name: PaddingFIFOQueueState(name, *_spec(ctx)))
    return lambda: state


@kernel("RandomShuffleQueueV2")
def _random_shuffle_queue(ctx: KernelContext):
    state = _lookup(ctx, lambda name: RandomShuffleQueueState(
        name, *_spec(ctx), int(ctx.attr("min_after_dequeue", 0)), int(ctx.attr("seed", 0)),
        int(ctx.attr("seed2", 0))))
    return lambda: state


@kernel("PriorityQueueV2")
def _priority_queue(ctx: KernelContext):
    from flowmesh.core import dtypes

    def make(name: str) -> PriorityQueueState:
        types, shapes, capacity = _spec(ctx)
        shapes = [TensorShape([]), *shapes] if shapes else []
        return PriorityQueueState(name, [dtypes.int64, *types], shapes, capacity)

    state = _lookup(ctx, make)
    return lambda: state
