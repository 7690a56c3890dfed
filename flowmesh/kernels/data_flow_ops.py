"""Kernels of ``flowmesh/ops/data_flow_ops.py``: FIFO queues in resource stores.

A :class:`QueueState` lives in the resource store of the queue's device, so every
session of that server shares it. Elements are tuples of torch tensors (copied on
enqueue, so later in-place updates of a variable that was enqueued do not leak in).

Blocking kernels wait on the queue's condition variable with :func:`wait_until`, which
also wakes up when the step is aborted (its rendezvous was aborted: a peer task died or
another part of the step failed) or the step's deadline passes, so a blocked queue
operation never outlives its step.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from flowmesh.errors import (
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    OutOfRangeError,
)
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.pipeline.sparse_value import SparseValue

_POLL_S = 0.05


def wait_until(cond: threading.Condition, ready: Callable[[], bool], step: Any, what: str) -> None:
    """Waits (holding ``cond``) until ``ready()`` is true.

    Args:
        cond: the condition variable guarding the state ``ready`` reads (held by the caller).
        ready: the predicate.
        step: the running ``StepContext`` (its rendezvous and timeout are honoured).
        what: a description for error messages ("dequeue from FIFOQueue 'q'").

    Raises:
        CancelledError: the step was aborted while waiting.
        DeadlineExceededError: the step's timeout passed.
    """
    timeout = getattr(step, "timeout", None)
    deadline = None if not timeout else time.monotonic() + timeout
    rendezvous = getattr(step, "rendezvous", None)
    while not ready():
        error = rendezvous.aborted if rendezvous is not None else None
        if error is not None:
            raise CancelledError(None, None, f"Step was cancelled while waiting to {what}: {error}")
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise DeadlineExceededError(None, None, f"Timed out after {timeout:g} s waiting to {what}")
        cond.wait(_POLL_S if remaining is None else min(remaining, _POLL_S))


class QueueState:
    """The elements of one FIFO queue and who waits on them.

    Subclasses (``kernels/queue_kinds.py``) change the order (``_put``/``_take``), how many
    elements a dequeue may take (``_available``) and how a batch is stacked (``stack``).
    """

    kind = "FIFOQueue"

    def __init__(self, name: str, dtypes: list[Any], shapes: list[Any], capacity: int):
        self.name = name
        self.dtypes = dtypes
        self.shapes = shapes
        self.capacity = capacity if capacity >= 0 else None
        self.items: collections.deque[tuple[Any, ...]] = collections.deque()
        self.cond = threading.Condition()
        self.closed = False
        self.enqueues_cancelled = False

    def __repr__(self) -> str:
        return f"<QueueState {self.name} size={len(self.items)} closed={self.closed}>"

    # --- checks ------------------------------------------------------------------------------
    def check_element(self, values: tuple[Any, ...], many: bool) -> None:
        for i, (value, shape) in enumerate(zip(values, self.shapes)):
            got = tuple(value.shape[1:]) if many else tuple(value.shape)
            if shape.rank is not None and not shape.is_compatible_with(got):
                raise InvalidArgumentError(
                    f"Shape mismatch in tuple component {i}. Expected {shape}, got {list(got)} "
                    f"({self.kind} '{self.name}')")
        if many and len({int(v.shape[0]) for v in values}) > 1:
            raise InvalidArgumentError(
                f"enqueue_many to {self.kind} '{self.name}': components have different sizes in "
                f"dimension 0: {[int(v.shape[0]) for v in values]}")

    def closed_error(self) -> CancelledError:
        return CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")

    def insufficient(self, requested: int) -> OutOfRangeError:
        return OutOfRangeError(
            None, None, f"{self.kind} '{self.name}' is closed and has insufficient elements (requested "
                        f"{requested}, current size {len(self.items)})")

    # --- operations (each takes the lock) ------------------------------------------------------
    def enqueue(self, step: Any, elements: list[tuple[Any, ...]]) -> None:
        with self.cond:
            if self.closed:
                raise self.closed_error()
            done = 0
            while done < len(elements):  # as many as fit at a time, blocking while full
                wait_until(self.cond, lambda: self._has_room() or self.enqueues_cancelled, step,
                           f"enqueue to {self.kind} '{self.name}'")
                if self.enqueues_cancelled:
                    raise self.closed_error()
                room = len(elements) - done if self.capacity is None else self.capacity - len(self.items)
                self._put_many(elements[done:done + room])
                done += room
                self.cond.notify_all()

    def _has_room(self) -> bool:
        return self.capacity is None or len(self.items) < self.capacity

    def _put(self, element: tuple[Any, ...]) -> None:
        self.items.append(element)

    def _put_many(self, elements: list[tuple[Any, ...]]) -> None:
        if type(self)._put is QueueState._put:
            self.items.extend(elements)
        else:
            for element in elements:
                self._put(element)

    def _take(self, count: int) -> list[tuple[Any, ...]]:
        return [self.items.popleft() for _ in range(count)]

    def _available(self) -> int:
        """How many elements a dequeue may take now (all of them once closed)."""
        return len(self.items)

    def stack(self, values: list[Any], component: int) -> Any:
        """The dequeued values of one component stacked along a new dimension 0."""
        return _stack(values)

    def dequeue(self, step: Any, n: int, up_to: bool) -> list[tuple[Any, ...]]:
        with self.cond:
            wait_until(self.cond, lambda: self._available() >= n or self.closed, step,
                       f"dequeue {n} element(s) from {self.kind} '{self.name}'")
            if len(self.items) < n and not (up_to and self.items):  # closed, too few left
                raise self.insufficient(n)
            count = min(n, len(self.items))
            taken = self._take(count)
            self.cond.notify_all()
            return taken

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.cond:
            self.closed = True
            if cancel_pending_enqueues:
                self.enqueues_cancelled = True
            self.cond.notify_all()


def _queue(ctx: KernelContext) -> QueueState:
    op = ctx.op
    name = ctx.attr("shared_name") or op.name
    return ctx.device.resources.lookup_or_create(
        ctx.attr("container", ""), name,
        lambda: QueueState(name, list(ctx.attr("component_types")), list(ctx.attr("shapes") or []),
                           int(ctx.attr("capacity", -1))))


@kernel("FIFOQueueV2")
def _fifo_queue(ctx: KernelContext):
    state = _queue(ctx)
    return lambda: state


def _as_queue(value: Any, op_type: str) -> QueueState:
    if not isinstance(value, QueueState):
        raise InvalidArgumentError(f"{op_type} expects a queue handle, got {type(value).__name__}")
    return value


def _owned(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, SparseValue):
        return SparseValue(value.indices.clone(), _owned(value.values), value.dense_shape.clone())
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.copy()
    return np.array(value, dtype=object)  # one string of a string batch: a 0-d object array


@kernel("QueueEnqueueV2", needs_step=True)
def _enqueue(ctx: KernelContext):
    def enqueue(step: Any, handle: Any, *values: Any) -> None:
        queue = _as_queue(handle, "QueueEnqueueV2")
        queue.check_element(values, many=False)
        queue.enqueue(step, [tuple(_owned(v) for v in values)])

    return enqueue


@kernel("QueueEnqueueManyV2", needs_step=True)
def _enqueue_many(ctx: KernelContext):
    def enqueue_many(step: Any, handle: Any, *values: Any) -> None:
        queue = _as_queue(handle, "QueueEnqueueManyV2")
        queue.check_element(values, many=True)
        count = int(values[0].shape[0]) if values else 0
        queue.enqueue(step, list(zip(*(_rows(v, count) for v in values))) if values else [])

    return enqueue_many


def _rows(value: Any, count: int) -> list[Any]:
    """The ``count`` rows of ``value``, owned by the queue: one copy of the batch, then views."""
    if isinstance(value, torch.Tensor):
        return list(value.clone().unbind(0))
    return [_owned(value[i]) for i in range(count)]


def _outputs(elements: list[tuple[Any, ...]], stacked: bool, queue: QueueState, ctx: KernelContext) -> Any:
    if not stacked:
        out = elements[0]
    elif elements:
        out = tuple(queue.stack([e[i] for e in elements], i) for i in range(len(queue.dtypes)))
    else:
        out = tuple(_empty(queue, i, ctx) for i in range(len(queue.dtypes)))
    return out[0] if len(out) == 1 else out


def _stack(values: list[Any]) -> Any:
    if isinstance(values[0], SparseValue):
        return SparseValue.stack(values, 0, "a queue's batch")
    if isinstance(values[0], torch.Tensor):
        return torch.stack(values)
    import numpy as np

    return np.stack(values)


def _empty(queue: QueueState, i: int, ctx: KernelContext) -> Any:
    shape = queue.shapes[i] if i < len(queue.shapes) else None
    if shape is None or not shape.is_fully_defined():
        raise InvalidArgumentError(
            f"dequeue_many(0) from {queue.kind} '{queue.name}' needs fully defined component shapes")
    return torch.zeros((0, *shape.as_list()), dtype=ctx.torch_dtype(queue.dtypes[i]))


@kernel("QueueDequeueV2", needs_step=True)
def _dequeue(ctx: KernelContext):
    def dequeue(step: Any, handle: Any) -> Any:
        queue = _as_queue(handle, "QueueDequeueV2")
        return _outputs(queue.dequeue(step, 1, up_to=False), False, queue, ctx)

    return dequeue


def _count(n: Any, op_type: str) -> int:
    count = int(n)
    if count < 0:
        raise InvalidArgumentError(f"{op_type}: the number of elements must be >= 0, got {count}")
    return count


@kernel("QueueDequeueManyV2", needs_step=True)
def _dequeue_many(ctx: KernelContext):
    def dequeue_many(step: Any, handle: Any, n: Any) -> Any:
        queue = _as_queue(handle, "QueueDequeueManyV2")
        return _outputs(queue.dequeue(step, _count(n, "QueueDequeueManyV2"), up_to=False), True, queue, ctx)

    return dequeue_many


@kernel("QueueDequeueUpToV2", needs_step=True)
def _dequeue_up_to(ctx: KernelContext):
    def dequeue_up_to(step: Any, handle: Any, n: Any) -> Any:
        queue = _as_queue(handle, "QueueDequeueUpToV2")
        return _outputs(queue.dequeue(step, _count(n, "QueueDequeueUpToV2"), up_to=True), True, queue, ctx)

    return dequeue_up_to


def _select(index: Any, *handles: Any) -> QueueState:
    i = int(index)
    if not 0 <= i < len(handles):
        raise InvalidArgumentError(f"QueueBase.from_list: index {i} is not in [0, {len(handles)})")
    return _as_queue(handles[i], "QueueSelect")


simple_kernel("QueueSelect", _select)


@kernel("QueueCloseV2")
def _close(ctx: KernelContext):
    cancel = bool(ctx.attr("cancel_pending_enqueues", False))
    return lambda handle: _as_queue(handle, "QueueCloseV2").close(cancel)


simple_kernel("QueueSizeV2", lambda handle: torch.tensor(len(_as_queue(handle, "QueueSizeV2").items),
                                                         dtype=torch.int32))
simple_kernel("QueueIsClosedV2", lambda handle: torch.tensor(_as_queue(handle, "QueueIsClosedV2").closed))
