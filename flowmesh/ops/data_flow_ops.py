"""Queues shared between steps and sessions: ``tf.FIFOQueue`` (and the accumulators).

A queue is a resource in the resource store of the device it is placed on, like a
variable: every session of every client of that server that names the same queue (by
``shared_name``, or by op name) sees the same elements. That is what lets
``SyncReplicasOptimizer`` hand out step tokens from the ps to all workers.

Ops (resource-handle versions of TensorFlow's, placed with the queue):

====================  ==========================================================
``FIFOQueueV2``       the handle (attrs ``component_types``, ``shapes``, ``capacity``)
``QueueEnqueueV2``    one element (blocks while the queue is full)
``QueueEnqueueManyV2``  elements split along dimension 0
``QueueDequeueV2``    one element (blocks while the queue is empty)
``QueueDequeueManyV2``  ``n`` elements stacked (blocks until ``n`` are there)
``QueueDequeueUpToV2``  up to ``n`` elements once the queue is closed
``QueueSizeV2``, ``QueueIsClosedV2``, ``QueueCloseV2``
====================  ==========================================================

Blocking ops wait until they can proceed, the queue is closed, the step is aborted (a
peer died, another part of the step failed) or the step's deadline
(``RunOptions.timeout_in_ms`` / ``operation_timeout_in_ms``) passes: they never hang a
step that is being cancelled. After ``close()`` enqueues fail with ``CancelledError``
and dequeues that cannot be satisfied fail with ``OutOfRangeError`` (which
``MonitoredSession`` treats as the end of training).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.ops._builders import constant_value, make_op, make_tensor

_RESOURCE = [(dtypes.resource, TensorShape([]))]


# --- op definitions ------------------------------------------------------------------------
QUEUE_OP_TYPES = {"FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2"}


def _queue_spec(handle: Tensor) -> tuple[list[dtypes.DType] | None, list[TensorShape] | None]:
    op = handle.op
    if op.type not in QUEUE_OP_TYPES:
        return None, None
    types = list(op.attrs["component_types"])
    shapes = [as_shape(s) for s in op.attrs["shapes"]] or [unknown_shape() for _ in types]
    if op.type == "PriorityQueueV2":  # the int64 priority is component 0
        types, shapes = [dtypes.int64, *types], [TensorShape([]), *shapes]
    return types, shapes


def _dequeue_shape(prefix: list[int | None] | None):
    def rule(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        shapes = [as_shape(s) for s in attrs.get("shapes") or []]
        types = list(attrs["component_types"])
        shapes = shapes or [unknown_shape() for _ in types]
        if prefix is None:
            return list(zip(types, shapes))
        lead = prefix
        if prefix == [-1]:  # dequeue_many: n from the constant input
            n = constant_value(inputs[1]) if len(inputs) > 1 else None
            lead = [int(n)] if n is not None else [None]
        return [(t, TensorShape(lead).concatenate(s)) for t, s in zip(types, shapes)]

    return rule


def _check_components(inputs: Sequence[Tensor], attrs: dict[str, Any], many: bool) -> list:
    handle, values = inputs[0], inputs[1:]
    types, shapes = _queue_spec(handle)
    if types is None:
        return []
    if len(values) != len(types):
        raise TypeError(f"Queue '{handle.op.name}' expects {len(types)} components per element, got "
                        f"{len(values)}")
    for i, (v, t, s) in enumerate(zip(values, types, shapes)):
        if v.dtype != t:
            raise TypeError(f"Component {i} enqueued to queue '{handle.op.name}' has dtype "
                            f"{v.dtype.name}, expected {t.name}")
        shape = v.shape[1:] if many and v.shape.rank is not None else v.shape
        if many and v.shape.rank == 0 and v.dtype != dtypes.variant:  # variant: e.g. a SparseTensor
            raise ValueError(f"enqueue_many to queue '{handle.op.name}' needs component {i} to have "
                             "rank >= 1 (the elements are split along dimension 0), got a scalar")
        if not shape.is_compatible_with(s):
            raise ValueError(f"Component {i} enqueued to queue '{handle.op.name}' has shape {shape}, "
                             f"expected {s}")
    return []


register_op("FIFOQueueV2", lambda inputs, attrs: _RESOURCE, not_differentiable=True, stateful=True)
register_op("QueueEnqueueV2", lambda i, a: _check_components(i, a, False), not_differentiable=True,
            stateful=True)
register_op("QueueEnqueueManyV2", lambda i, a: _check_components(i, a, True), not_differentiable=True,
            stateful=True)
register_op("QueueDequeueV2", _dequeue_shape(None), not_differentiable=True, stateful=True)
register_op("QueueDequeueManyV2", _dequeue_shape([-1]), not_differentiable=True, stateful=True)
register_op("QueueDequeueUpToV2", _dequeue_shape([None]), not_differentiable=True, stateful=True)
register_op("QueueSizeV2", lambda i, a: [(dtypes.int32, TensorShape([]))], not_differentiable=True,
            stateful=True)
register_op("QueueIsClosedV2", lambda i, a: [(dtypes.bool, TensorShape([]))], not_differentiable=True,
            stateful=True)
register_op("QueueCloseV2", lambda i, a: [], not_differentiable=True, stateful=True)
register_op("QueueSelect", lambda i, a: _RESOURCE, not_differentiable=True)


# --- the Python API -------------------------------------------------------------------------
class QueueBase:
    """Base class of queues (``tf.QueueBase``): elements are tuples of tensors.

    Args:
        dtypes: the dtype of each component.
        shapes: the shape of each component (or ``None`` for unknown shapes).
        names: optional component names (then elements are dicts).
        queue_ref: the queue's resource handle.
    """

    def __init__(self, dtypes: Sequence[Any], shapes: Sequence[Any] | None, names: Sequence[str] | None,
                 queue_ref: Tensor):
        self._dtypes = list(dtypes)
        self._shapes = [as_shape(s) for s in shapes] if shapes else [unknown_shape() for _ in self._dtypes]
        self._names = list(names) if names is not None else None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name
        self._prefix = self._name.split("/")[-1]  # op names: TensorFlow's "<queue>_Dequeue" in the current scope

    @property
    def queue_ref(self) -> Tensor:
        return self._queue_ref

    @staticmethod
    def from_list(index: Any, queues: Sequence[QueueBase]) -> QueueBase:
        """The queue ``queues[index]``, chosen at run time (``tf.QueueBase.from_list``).

        Raises:
            ValueError: no queues, or queues with different dtypes, shapes or names.
        """
        if not queues:
            raise ValueError("QueueBase.from_list needs at least one queue")
        first = queues[0]
        for q in queues[1:]:
            if q.dtypes != first.dtypes or q.names != first.names or \
                    [s.as_list() if s.rank is not None else None for s in q.shapes] != \
                    [s.as_list() if s.rank is not None else None for s in first.shapes]:
                raise ValueError(f"QueueBase.from_list: queue {q.name} does not match {first.name} "
                                 f"(dtypes {[d.name for d in q.dtypes]} vs {[d.name for d in first.dtypes]}, "
                                 f"shapes {q.shapes} vs {first.shapes}, names {q.names} vs {first.names})")
        choice = convert_to_tensor(index, dtype=dtypes.int32, name="index")
        ref = make_tensor("QueueSelect", [choice, *(q.queue_ref for q in queues)], name="QueueSelect")
        return QueueBase(first.dtypes, first.shapes, first.names, ref)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtypes(self) -> list[dtypes.DType]:
        return list(self._dtypes)

    @property
    def shapes(self) -> list[TensorShape]:
        return list(self._shapes)

    @property
    def names(self) -> list[str] | None:
        return None if self._names is None else list(self._names)

    # --- enqueue -----------------------------------------------------------------------------
    def _components(self, vals: Any, what: str) -> list[Tensor]:
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError(f"Queue {self._name} has no component names; {what} a list or tuple")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"{what.capitalize()} keys {sorted(vals)} do not match the queue's names "
                                 f"{sorted(self._names)}")
            vals = [vals[n] for n in self._names]
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Queue {self._name} has {len(self._dtypes)} components; got {len(vals)} values")
        return [convert_to_tensor(v, dtype=t, name=f"component_{i}")
                for i, (v, t) in enumerate(zip(vals, self._dtypes))]

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        """Adds one element (blocks while the queue is full).

        Raises:
            ValueError / TypeError: components of the wrong number, shape or dtype.
        """
        with get_default_graph().name_scope(name or f"{self._prefix}_enqueue") as scope:
            values = self._components(vals, "enqueue")
            return make_op("QueueEnqueueV2", [self._queue_ref, *values], {"timeout_ms": -1},
                           name=scope)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        """Adds the slices of ``vals`` along dimension 0 as elements."""
        with get_default_graph().name_scope(name or f"{self._prefix}_EnqueueMany") as scope:
            values = self._components(vals, "enqueue_many")
            return make_op("QueueEnqueueManyV2", [self._queue_ref, *values], {"timeout_ms": -1},
                           name=scope)

    # --- dequeue -----------------------------------------------------------------------------
    def _attrs(self) -> dict[str, Any]:
        return {"component_types": list(self._dtypes), "shapes": list(self._shapes), "timeout_ms": -1}

    def _structure(self, outputs: Sequence[Tensor]) -> Any:
        if self._names is not None:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def dequeue(self, name: str | None = None) -> Any:
        """Removes one element (blocks while empty); a tensor, a list, or a dict with names.

        At run time, fails with ``OutOfRangeError`` once the queue is closed and empty.
        """
        op = make_op("QueueDequeueV2", [self._queue_ref], self._attrs(), name=name or f"{self._prefix}_Dequeue")
        return self._structure(op.outputs)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """Removes ``n`` elements, stacked along a new dimension 0 (blocks until there are)."""
        count = convert_to_tensor(n, dtype=dtypes.int32, name="n")
        op = make_op("QueueDequeueManyV2", [self._queue_ref, count], self._attrs(),
                     name=name or f"{self._prefix}_DequeueMany")
        return self._structure(op.outputs)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like :meth:`dequeue_many`, but a closed queue gives what it has left (at least one)."""
        count = convert_to_tensor(n, dtype=dtypes.int32, name="n")
        op = make_op("QueueDequeueUpToV2", [self._queue_ref, count], self._attrs(),
                     name=name or f"{self._prefix}_DequeueUpTo")
        return self._structure(op.outputs)

    # --- state -------------------------------------------------------------------------------
    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """Closes the queue: later enqueues fail; dequeues drain what is left.

        Args:
            cancel_pending_enqueues: also fail the enqueues blocked on a full queue.
        """
        return make_op("QueueCloseV2", [self._queue_ref],
                       {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                       name=name or f"{self._prefix}_Close")

    def is_closed(self, name: str | None = None) -> Tensor:
        return make_tensor("QueueIsClosedV2", [self._queue_ref], name=name or f"{self._prefix}_IsClosed")

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements in the queue (an int32 scalar)."""
        return make_tensor("QueueSizeV2", [self._queue_ref], name=name or f"{self._prefix}_Size")


class FIFOQueue(QueueBase):
    """A first-in first-out queue (``tf.FIFOQueue``).

    Args:
        capacity: the most elements it holds (negative: unbounded).
        dtypes: the dtype of each component of an element.
        shapes: the shape of each component (required by ``dequeue_many``).
        names: optional component names.
        shared_name: shares the queue under this name across sessions (default: its op name).
        name: the op name.

    Raises:
        ValueError: ``shapes`` or ``names`` of the wrong length.

    Example:
        >>> q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        >>> push = q.enqueue_many([[1.0, 2.0, 3.0]])
        >>> pop = q.dequeue()
    """

    def __init__(self, capacity: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, name: str = "fifo_queue"):
        types = [_as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]
        shape_list = _shape_list(shapes, len(types))
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(types):
                raise ValueError(f"Queue names {names} must match the {len(types)} dtypes")
        attrs = {"component_types": types, "shapes": shape_list, "capacity": int(capacity),
                 "container": "", "shared_name": shared_name or ""}
        ref = make_tensor("FIFOQueueV2", [], attrs, name=name)
        super().__init__(types, shape_list, names, ref)


def _as_dtype(value: Any) -> dtypes.DType:
    return dtypes.as_dtype(value)


def _shape_list(shapes: Any, count: int) -> list[TensorShape]:
    """TensorFlow's rule: a list of ints/None is one shape; otherwise one shape per dtype."""
    if shapes is None:
        return []
    if isinstance(shapes, TensorShape) or not isinstance(shapes, (list, tuple)):
        shapes = [shapes]
    elif all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape given as a list of dims (``()`` is a scalar)
    shape_list = [as_shape(s) for s in shapes]
    if len(shape_list) != count:
        raise ValueError(f"Queue shapes must have the same length as dtypes: got {len(shape_list)} shapes "
                         f"for {count} dtypes")
    return shape_list


from flowmesh.ops.conditional_accumulator import (  # noqa: E402 - TensorFlow's module layout
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    SparseConditionalAccumulator,
)

__all__ = [
    "ConditionalAccumulator",
    "ConditionalAccumulatorBase",
    "FIFOQueue",
    "QueueBase",
    "SparseConditionalAccumulator",
]
