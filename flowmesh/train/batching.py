"""TF1 queue-based batching: ``tf.train.batch``, ``shuffle_batch``, their ``_join`` and
``maybe_`` variants.

Each call creates a queue (``FIFOQueue``; ``PaddingFIFOQueue`` with ``dynamic_pad``;
``RandomShuffleQueue`` for the shuffling ones), a :class:`QueueRunner` in
``QUEUE_RUNNERS`` whose threads enqueue the input tensors (``num_threads`` copies of one
enqueue op, or one op per tensor list for the ``_join`` variants), TensorFlow's summary
of how full the queue is, and returns the dequeue of ``batch_size`` elements. With
``allow_smaller_final_batch`` the last batch may be smaller (``dequeue_up_to``);
otherwise leftover elements that do not fill a batch are dropped at the end.

A ``SparseTensor`` component travels as one value and comes out as a batched
``SparseTensor`` (dense shape: the batch size, then each dimension's largest extent).

``keep_input`` (the ``maybe_`` variants) filters: a scalar bool drops or keeps the
element, a vector (with ``enqueue_many``) keeps some rows of the batch given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.ops._builders import constant_value
from flowmesh.ops.data_flow_ops import FIFOQueue
from flowmesh.ops.queue_kinds import PaddingFIFOQueue, RandomShuffleQueue

__all__ = ["batch", "batch_join", "maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join", "shuffle_batch", "shuffle_batch_join"]


# --- the element structure ---------------------------------------------------------------------
def _as_tensor_list(tensors: Any) -> list[Any]:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original: Any, dequeued: Any) -> Any:
    if isinstance(original, dict):
        values = [dequeued] if len(original) == 1 else dequeued  # one component comes back bare
        return {k: values[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _validate(tensor_list: list[Any], what: str) -> list[Any]:
    """Tensors and SparseTensors."""
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    return [SparseTensor.from_value(t) if isinstance(t, (SparseTensor, SparseTensorValue))
            else convert_to_tensor(t) for t in tensor_list]


def _sparse_positions(tensor_list: list[Any], enqueue_many: bool) -> dict[int, tuple[Any, TensorShape]]:
    """Component index -> (values dtype, shape of one element) of each SparseTensor.

    A SparseTensor travels through the queue as one variant value (as in ``tf.data``) and
    the dequeued batch is a SparseTensor of the largest extent of each dimension.
    """
    found = {}
    for i, t in enumerate(tensor_list):
        if isinstance(t, SparseTensor):
            shape = t.shape
            if enqueue_many and shape.rank is not None:
                shape = shape[1:]
            found[i] = (t.dtype, shape)
    return found


def _components(tensor_list: list[Any]) -> list[Tensor]:
    from flowmesh.ops.sparse_element_ops import to_variant

    return [to_variant(t) if isinstance(t, SparseTensor) else t for t in tensor_list]


def _restore_sparse(dequeued: Any, sparse: dict[int, tuple[Any, TensorShape]]) -> Any:
    if not sparse:
        return dequeued
    from flowmesh.ops.sparse_element_ops import from_variant

    flat = list(dequeued) if isinstance(dequeued, list) else [dequeued]
    for i, (dtype, shape) in sparse.items():
        batch_shape = TensorShape([None]).concatenate(shape) if shape.rank is not None else shape
        flat[i] = from_variant(flat[i], dtype, batch_shape)
    return flat if isinstance(dequeued, list) else flat[0]


def _validate_keep_input(keep_input: Any, enqueue_many: bool) -> Tensor:
    keep = convert_to_tensor(keep_input, dtype=dtypes.bool, name="keep_input")
    if keep.shape.rank is None:
        raise ValueError("keep_input dimensions must be known at graph construction.")
    if not enqueue_many and keep.shape.rank == 1:
        raise ValueError("keep_input cannot be a vector when enqueue_many=False.")
    if keep.shape.rank > 1:
        raise ValueError(f"keep_input must be 0 or 1 dimensions, got shape {keep.shape}.")
    return keep


def _dtypes(tensor_list_list: list[list[Tensor]]) -> list[dtypes.DType]:
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        other_types = [t.dtype.base_dtype for t in other]
        if other_types != types:
            raise TypeError(f"Expected types to be consistent: {[d.name for d in types]} vs. "
                            f"{[d.name for d in other_types]}.")
    return types


def _shapes(tensor_list_list: list[list[Tensor]], shapes: Any, enqueue_many: bool) -> list[TensorShape]:
    if shapes is not None:
        return [unknown_shape() if isinstance(t, SparseTensor) else as_shape(s)
                for t, s in zip(tensor_list_list[0], shapes)]
    merged = []
    for i in range(len(tensor_list_list[0])):
        shape = None
        for tensor_list in tensor_list_list:
            tensor = tensor_list[i]
            if isinstance(tensor, SparseTensor):
                shape = unknown_shape()  # one variant value per element
                break
            if tensor.shape.rank is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tensor.name}; pass `shapes`")
            if enqueue_many and tensor.shape.rank == 0:
                raise ValueError(f"enqueue_many=True needs tensors of rank >= 1 (a batch), got a scalar "
                                 f"{tensor.name}")
            row = tensor.shape[1:] if enqueue_many else tensor.shape
            shape = row if shape is None else shape.merge_with(row)
        merged.append(shape)
    return merged


# --- enqueueing ------------------------------------------------------------------------------
def _enqueue_fn(queue: Any, tensor_list: list[Tensor], enqueue_many: bool, keep: Tensor) -> Any:
    """One enqueue op of ``tensor_list``, filtered by ``keep``."""
    from flowmesh.ops.array_ops import expand_dims, reshape
    from flowmesh.ops.control_flow_ops import no_op
    from flowmesh.ops.gather_ops import boolean_mask

    static = constant_value(keep) if keep.shape.rank == 0 else None
    if static is not None:
        if not bool(static):
            return no_op()
        return queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
    if keep.shape.rank == 0:  # a scalar decided at run time: a batch of zero or one rows
        if not enqueue_many:
            tensor_list = [expand_dims(t, 0) for t in tensor_list]
        mask = reshape(keep, [1]) if not enqueue_many else None
        if mask is None:  # enqueue_many with a scalar: all rows or none
            from flowmesh.ops.array_ops import fill, shape

            mask = fill(shape(tensor_list[0])[:1], keep)
        keep = mask
    return queue.enqueue_many([boolean_mask(t, keep) for t in tensor_list])


def _add_runner(queue: Any, ops: list[Any]) -> None:
    from flowmesh.train.queue_runner import QueueRunner, add_queue_runner

    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue: Any, batch_size: Any, allow_smaller_final_batch: bool, name: str) -> Any:
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _check_fully_defined(types: list[dtypes.DType], shapes: list[TensorShape], what: str) -> None:
    if not all(s.is_fully_defined() or t == dtypes.variant for t, s in zip(types, shapes)):
        raise ValueError(f"{what}: all shapes must be fully defined: {[str(s) for s in shapes]}; pass "
                         "`shapes`, or dynamic_pad=True to pad variable dimensions (tf.train.batch)")


# --- the common builder ----------------------------------------------------------------------
def _build(what: str, tensors_list: Sequence[Any], original: Any, batch_size: Any, keep_input: Any,
           enqueue_many: bool, shapes: Any, allow_smaller_final_batch: bool, name: str | None,
           make_queue: Any, threads: int) -> Any:
    """Builds the queue, its runner and summary, and returns the dequeued batch.

    ``tensors_list`` holds one tensor list per enqueue op (the ``_join`` variants) or a
    single one enqueued by ``threads`` threads.
    """
    graph = get_default_graph()
    with graph.name_scope(name or what) as scope:
        lists = [_validate(_as_tensor_list(t), what) for t in tensors_list]
        keep = _validate_keep_input(keep_input, enqueue_many)
        sparse = _sparse_positions(lists[0], enqueue_many)
        if sparse and constant_value(keep) is None:
            raise ValueError(f"{what}(): a keep_input decided at run time cannot filter SparseTensor "
                             "components; filter them before batching (e.g. with tf.data's filter)")
        shape_list = _shapes(lists, shapes, enqueue_many)
        lists = [_components(tensor_list) for tensor_list in lists]
        queue = make_queue(_dtypes(lists), shape_list)
        ops = [_enqueue_fn(queue, tensor_list, enqueue_many, keep) for tensor_list in lists]
        _add_runner(queue, ops * threads if len(ops) == 1 else ops)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(original, _restore_sparse(dequeued, sparse))


def _fifo(capacity: int, dynamic_pad: bool, shared_name: str | None, what: str) -> Any:
    def make(types: list[dtypes.DType], shapes: list[TensorShape]) -> Any:
        if dynamic_pad:
            queue = PaddingFIFOQueue(capacity, types, shapes, shared_name=shared_name)
        else:
            _check_fully_defined(types, shapes, what)
            queue = FIFOQueue(capacity, types, shapes, shared_name=shared_name)
        _summary(f"fraction_of_{capacity}_full", queue.size(), 0, capacity)
        return queue

    return make


def _shuffling(capacity: int, min_after_dequeue: int, seed: int | None, shared_name: str | None,
               what: str) -> Any:
    if capacity <= min_after_dequeue:
        raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")

    def make(types: list[dtypes.DType], shapes: list[TensorShape]) -> Any:
        _check_fully_defined(types, shapes, what)
        queue = RandomShuffleQueue(capacity, min_after_dequeue, types, shapes, seed=seed, shared_name=shared_name)
        span = capacity - min_after_dequeue
        _summary(f"fraction_over_{min_after_dequeue}_of_{span}_full", queue.size(), min_after_dequeue, span)
        return queue

    return make


def _summary(name: str, size: Tensor, offset: int, span: int) -> None:
    """``max(0, size - offset) / span`` as a scalar summary (TensorFlow's names)."""
    from flowmesh.ops.cast_ops import cast
    from flowmesh.ops.math_ops import maximum
    from flowmesh.ops.summary_ops import scalar

    value = maximum(0, size - offset) if offset else size
    scalar(name, cast(value, dtypes.float32) * (1.0 / span))


# --- the public functions ---------------------------------------------------------------------
def batch(tensors: Any, batch_size: Any, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: str | None = None, name: str | None = None) -> Any:
    """Batches ``tensors`` (a list or dict) through a FIFO queue (``tf.train.batch``).

    Args:
        tensors: the tensors of one element (or of a batch of them, with ``enqueue_many``).
        batch_size: the number of elements per batch.
        num_threads: threads enqueueing ``tensors``.
        capacity: the queue's capacity.
        enqueue_many: ``tensors`` are batches whose rows are the elements.
        shapes: the element shapes (default: inferred from ``tensors``).
        dynamic_pad: pad variable dimensions to the longest element of each batch.
        allow_smaller_final_batch: the last batch may have fewer than ``batch_size``.
        shared_name: shares the queue across sessions.
        name: the name scope (``batch``).

    Returns:
        The batch, in the structure of ``tensors`` (a lone tensor for a one-element list).

    Raises:
        ValueError: no tensors, shapes not fully defined without ``dynamic_pad``.
    """
    return _build("batch", [tensors], tensors, batch_size, True, enqueue_many, shapes, allow_smaller_final_batch,
                  name, _fifo(capacity, dynamic_pad, shared_name, "batch"), num_threads)


def maybe_batch(tensors: Any, keep_input: Any, batch_size: Any, num_threads: int = 1, capacity: int = 32,
                enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
                allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                name: str | None = None) -> Any:
    """:func:`batch` of the elements for which ``keep_input`` is true (``tf.train.maybe_batch``)."""
    return _build("batch", [tensors], tensors, batch_size, keep_input, enqueue_many, shapes,
                  allow_smaller_final_batch, name, _fifo(capacity, dynamic_pad, shared_name, "maybe_batch"),
                  num_threads)


def batch_join(tensors_list: Sequence[Any], batch_size: Any, capacity: int = 32, enqueue_many: bool = False,
               shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
               shared_name: str | None = None, name: str | None = None) -> Any:
    """Batches elements from several tensor lists, one enqueueing thread each
    (``tf.train.batch_join``)."""
    return _build("batch_join", list(tensors_list), tensors_list[0], batch_size, True, enqueue_many, shapes,
                  allow_smaller_final_batch, name, _fifo(capacity, dynamic_pad, shared_name, "batch_join"), 1)


def maybe_batch_join(tensors_list: Sequence[Any], keep_input: Any, batch_size: Any, capacity: int = 32,
                     enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
                     allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                     name: str | None = None) -> Any:
    """:func:`batch_join` of the elements for which ``keep_input`` is true."""
    return _build("batch_join", list(tensors_list), tensors_list[0], batch_size, keep_input, enqueue_many,
                  shapes, allow_smaller_final_batch, name,
                  _fifo(capacity, dynamic_pad, shared_name, "maybe_batch_join"), 1)


def shuffle_batch(tensors: Any, batch_size: Any, capacity: int, min_after_dequeue: int, num_threads: int = 1,
                  seed: int | None = None, enqueue_many: bool = False, shapes: Any = None,
                  allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                  name: str | None = None) -> Any:
    """Batches ``tensors`` in a random order through a ``RandomShuffleQueue``
    (``tf.train.shuffle_batch``).

    Args:
        min_after_dequeue: elements kept in the queue to mix (until the input ends).
        seed: the queue's op seed.
        Others: as for :func:`batch`.

    Raises:
        ValueError: ``capacity <= min_after_dequeue``, shapes not fully defined.
    """
    return _build("shuffle_batch", [tensors], tensors, batch_size, True, enqueue_many, shapes,
                  allow_smaller_final_batch, name,
                  _shuffling(capacity, min_after_dequeue, seed, shared_name, "shuffle_batch"), num_threads)


def maybe_shuffle_batch(tensors: Any, batch_size: Any, capacity: int, min_after_dequeue: int, keep_input: Any,
                        num_threads: int = 1, seed: int | None = None, enqueue_many: bool = False,
                        shapes: Any = None, allow_smaller_final_batch: bool = False,
                        shared_name: str | None = None, name: str | None = None) -> Any:
    """:func:`shuffle_batch` of the elements for which ``keep_input`` is true."""
    return _build("shuffle_batch", [tensors], tensors, batch_size, keep_input, enqueue_many, shapes,
                  allow_smaller_final_batch, name,
                  _shuffling(capacity, min_after_dequeue, seed, shared_name, "maybe_shuffle_batch"), num_threads)


def shuffle_batch_join(tensors_list: Sequence[Any], batch_size: Any, capacity: int, min_after_dequeue: int,
                       seed: int | None = None, enqueue_many: bool = False, shapes: Any = None,
                       allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                       name: str | None = None) -> Any:
    """Shuffled batches from several tensor lists, one enqueueing thread each
    (``tf.train.shuffle_batch_join``)."""
    return _build("shuffle_batch_join", list(tensors_list), tensors_list[0], batch_size, True, enqueue_many,
                  shapes, allow_smaller_final_batch, name,
                  _shuffling(capacity, min_after_dequeue, seed, shared_name, "shuffle_batch_join"), 1)


def maybe_shuffle_batch_join(tensors_list: Sequence[Any], batch_size: Any, capacity: int, min_after_dequeue: int,
                             keep_input: Any, seed: int | None = None, enqueue_many: bool = False,
                             shapes: Any = None, allow_smaller_final_batch: bool = False,
                             shared_name: str | None = None, name: str | None = None) -> Any:
    """:func:`shuffle_batch_join` of the elements for which ``keep_input`` is true."""
    return _build("shuffle_batch_join", list(tensors_list), tensors_list[0], batch_size, keep_input,
                  enqueue_many, shapes, allow_smaller_final_batch, name,
                  _shuffling(capacity, min_after_dequeue, seed, shared_name, "maybe_shuffle_batch_join"), 1)
