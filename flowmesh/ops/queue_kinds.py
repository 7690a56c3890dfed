"""The other queue kinds: ``tf.PaddingFIFOQueue``, ``tf.RandomShuffleQueue``, ``tf.PriorityQueue``.

They share ``tf.FIFOQueue``'s enqueue/dequeue/close ops (``flowmesh/ops/data_flow_ops.py``)
and differ only in the handle op, whose kernel (``flowmesh/kernels/queue_kinds.py``)
creates a queue with another order or batching rule:

=========================  ===========================================================
``PaddingFIFOQueueV2``     FIFO; ``dequeue_many`` pads components whose shapes have
                           unknown dimensions to the largest element of the batch
``RandomShuffleQueueV2``   random order; keeps ``min_after_dequeue`` elements until
                           the queue is closed (attrs ``min_after_dequeue``, ``seed``,
                           ``seed2``)
``PriorityQueueV2``        smallest int64 priority (component 0 of every element) first
=========================  ===========================================================

The random order is seeded like every random op (graph seed + op seed) but does not
reproduce TensorFlow's Philox stream, so only the multiset of elements matches it.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes as _dtypes
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.data_flow_ops import _RESOURCE, QueueBase, _shape_list
from flowmesh.ops.random_ops import get_seed

for _op in ("PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2"):
    register_op(_op, lambda inputs, attrs: _RESOURCE, not_differentiable=True, stateful=True)


def _types(dtypes: Any) -> list[_dtypes.DType]:
    return [_dtypes.as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]


def _names(names: Any, count: int) -> list[str] | None:
    if names is None:
        return None
    names = list(names) if isinstance(names, (list, tuple)) else [names]
    if len(names) != count:
        raise ValueError(f"Queue names {names} must match the {count} dtypes")
    return names


def _attrs(capacity: int, types: list[_dtypes.DType], shapes: list[TensorShape],
           shared_name: str | None, **extra: Any) -> dict[str, Any]:
    return {"component_types": types, "shapes": shapes, "capacity": int(capacity), "container": "",
            "shared_name": shared_name or "", **extra}


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose batches pad variable-size components (``tf.PaddingFIFOQueue``).

    Args:
        capacity: the most elements it holds.
        dtypes: the dtype of each component.
        shapes: the shape of each component (required; ``None`` dims are padded in
            ``dequeue_many``/``dequeue_up_to`` with zeros or empty strings).
        names: optional component names.
        shared_name: shares the queue across sessions under this name.
        name: the op name.

    Raises:
        ValueError: ``shapes`` missing or of the wrong length.
    """

    def __init__(self, capacity: int, dtypes: Any, shapes: Any, names: Any = None,
                 shared_name: str | None = None, name: str = "padding_fifo_queue"):
        types = _types(dtypes)
        shape_list = _shape_list(shapes, len(types))
        if not shape_list:
            raise ValueError(f"PaddingFIFOQueue '{name}' needs `shapes` (one per dtype); use None for "
                             "the dimensions to pad, e.g. shapes=[[None]]")
        ref = make_tensor("PaddingFIFOQueueV2", [], _attrs(capacity, types, shape_list, shared_name),
                          name=name)
        super().__init__(types, shape_list, _names(names, len(types)), ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in a random order (``tf.RandomShuffleQueue``).

    Args:
        capacity: the most elements it holds.
        min_after_dequeue: elements kept after a dequeue until the queue is closed
            (the mixing buffer of ``tf.train.shuffle_batch``).
        dtypes: the dtype of each component.
        shapes: the shape of each component (required by ``dequeue_many``).
        names: optional component names.
        seed: the op-level seed (with the graph seed; ``None``: random).
        shared_name: shares the queue across sessions under this name.
        name: the op name.
    """

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Any, shapes: Any = None,
                 names: Any = None, seed: int | None = None, shared_name: str | None = None,
                 name: str = "random_shuffle_queue"):
        if min_after_dequeue < 0 or (capacity >= 0 and min_after_dequeue >= capacity):
            raise ValueError(f"RandomShuffleQueue '{name}': min_after_dequeue ({min_after_dequeue}) "
                             f"must be >= 0 and smaller than capacity ({capacity})")
        types = _types(dtypes)
        shape_list = _shape_list(shapes, len(types))
        seed1, seed2 = get_seed(seed)
        attrs = _attrs(capacity, types, shape_list, shared_name, min_after_dequeue=int(min_after_dequeue),
                       seed=int(seed1 or 0), seed2=int(seed2 or 0))
        ref = make_tensor("RandomShuffleQueueV2", [], attrs, name=name)
        super().__init__(types, shape_list, _names(names, len(types)), ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element with the smallest priority first (``tf.PriorityQueue``).

    Every element starts with an int64 scalar priority, followed by components of
    ``types``: ``q.enqueue((priority, value))``; dequeues return ``[priority, value]``.

    Args:
        capacity: the most elements it holds.
        types: the dtypes of the components after the priority.
        shapes: their shapes (required by ``dequeue_many``).
        names: optional component names.
        shared_name: shares the queue across sessions under this name.
        name: the op name.
    """

    def __init__(self, capacity: int, types: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, name: str = "priority_queue"):
        type_list = _types(types)
        shape_list = _shape_list(shapes, len(type_list))
        ref = make_tensor("PriorityQueueV2", [], _attrs(capacity, type_list, shape_list, shared_name),
                          name=name)
        all_shapes = [TensorShape([]), *shape_list] if shape_list else []
        super().__init__([_dtypes.int64, *type_list], all_shapes,
                         _names(names, len(type_list) + 1), ref)


__all__ = ["PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue"]
