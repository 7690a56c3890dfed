"""TF1 queue-based input producers (``tf.train.string_input_producer`` and friends).

Each producer fills a ``FIFOQueue`` from a tensor through a :class:`QueueRunner` added to
the ``QUEUE_RUNNERS`` collection (started by ``tf.train.start_queue_runners`` or by
``MonitoredSession``). ``num_epochs`` counts in a local variable (``limit_epochs``):
after that many passes the enqueue fails with ``OutOfRangeError``, the runner closes
the queue, and the consumer's dequeue raises ``OutOfRangeError`` once the queue is
drained, which ends a ``MonitoredSession`` loop. Local variables need
``tf.local_variables_initializer()`` (``MonitoredSession`` runs it).

Each producer also adds TensorFlow's summary ``<scope>/fraction_of_<capacity>_full``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor, get_default_graph
from flowmesh.core.shapes import as_shape
from flowmesh.ops.data_flow_ops import FIFOQueue

__all__ = ["input_producer", "limit_epochs", "match_filenames_once", "range_input_producer",
           "slice_input_producer", "string_input_producer"]


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """Returns ``tensor`` ``num_epochs`` times, then fails with ``OutOfRangeError``.

    Args:
        tensor: any tensor.
        num_epochs: how many evaluations succeed (``None``: unlimited, ``tensor`` itself).
        name: the op name scope (``limit_epochs``).

    Returns:
        ``tensor`` behind an ``epochs`` counter (a local int64 variable).

    Raises:
        ValueError: ``num_epochs`` is not positive.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    from flowmesh.ops.array_ops import identity
    from flowmesh.ops.state_ops import count_up_to
    from flowmesh.ops.variables import Variable

    graph = get_default_graph()
    with graph.name_scope(name or "limit_epochs") as scope:
        epochs = Variable(convert_to_tensor(0, dtype=dtypes.int64), name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with graph.control_dependencies([counter]):
            return identity(tensor, name=scope)


def match_filenames_once(pattern: Any, name: str | None = None) -> Any:
    """A local variable holding the file names matching ``pattern`` (globbed once, when
    local variables are initialized)."""
    from flowmesh.ops.file_io_ops import matching_files
    from flowmesh.ops.variables import Variable

    with get_default_graph().name_scope(name or "matching_filenames"):
        return Variable(lambda: matching_files(pattern), trainable=False, name=name or "matching_filenames",
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])


def _fraction_full(queue: Any, capacity: int, summary_name: str) -> None:
    from flowmesh.ops.cast_ops import cast
    from flowmesh.ops.summary_ops import scalar

    scalar(summary_name, cast(queue.size(), dtypes.float32) * (1.0 / capacity))


def input_producer(input_tensor: Any, element_shape: Any = None, num_epochs: int | None = None,
                   shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                   shared_name: str | None = None, summary_name: str | None = None,
                   name: str | None = None, cancel_op: Any = None) -> FIFOQueue:
    """A queue filled with the rows of ``input_tensor`` by a queue runner.

    Args:
        input_tensor: the rows to produce (dimension 0 indexes them).
        element_shape: the shape of a row (required when the tensor's is not fully known).
        num_epochs: passes over the rows before ``OutOfRangeError`` (``None``: forever).
        shuffle: shuffle the rows of each pass.
        seed: the shuffle's op seed.
        capacity: the queue's capacity.
        shared_name: shares the queue across sessions.
        summary_name: adds ``summary_name`` (how full the queue is) to the summaries.
        name: the name scope (``input_producer``).
        cancel_op: the queue runner's cancel op.

    Returns:
        The ``FIFOQueue`` of rows.

    Raises:
        ValueError: the row shape is not fully defined.
    """
    from flowmesh.ops.random_ops import random_shuffle
    from flowmesh.train.queue_runner import QueueRunner, add_queue_runner

    graph = get_default_graph()
    with graph.name_scope(name or "input_producer") as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        row = input_tensor.shape[1:] if input_tensor.shape.rank is not None else as_shape(None)
        element = row.merge_with(as_shape(element_shape))
        if not element.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` "
                             f"must be specified (got rows of shape {row} and element_shape "
                             f"{element_shape})")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype], shapes=[element],
                          shared_name=shared_name, name=scope)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full(queue, capacity, summary_name)
        return queue


def string_input_producer(string_tensor: Any, num_epochs: int | None = None, shuffle: bool = True,
                          seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                          name: str | None = None, cancel_op: Any = None) -> FIFOQueue:
    """A queue of strings (usually file names) for a reader (``tf.train.string_input_producer``).

    Args:
        string_tensor: a 1-D string tensor or variable (``match_filenames_once``) or a
            non-empty list of strings.
        num_epochs, shuffle, seed, capacity, shared_name, name, cancel_op: as for
            :func:`input_producer`.

    Raises:
        ValueError: an empty list.
    """
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not hasattr(string_tensor, "dtype") and not len(string_tensor):
        raise ValueError(not_null_err)
    from flowmesh.ops.array_ops import identity, size
    from flowmesh.ops.logging_ops import Assert
    from flowmesh.ops.math_ops import greater

    graph = get_default_graph()
    with graph.name_scope(name or "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with graph.control_dependencies([Assert(greater(size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope, cancel_op)


def range_input_producer(limit: Any, num_epochs: int | None = None, shuffle: bool = True,
                         seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                         name: str | None = None) -> FIFOQueue:
    """A queue of the int32 integers ``0 .. limit - 1`` (``tf.train.range_input_producer``)."""
    from flowmesh.ops.range_ops import range as range_op

    graph = get_default_graph()
    with graph.name_scope(name or "input_producer") as scope:
        values = range_op(limit)
        return input_producer(values, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list: Any, num_epochs: int | None = None, shuffle: bool = True,
                         seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                         name: str | None = None) -> list[Tensor]:
    """One row of every tensor of ``tensor_list`` at a time (``tf.train.slice_input_producer``).

    Returns:
        The same row of each tensor (a list), dequeued as one index.

    Raises:
        ValueError: an empty ``tensor_list``, or tensors of different lengths.
    """
    from flowmesh.ops.array_ops import shape
    from flowmesh.ops.gather_ops import gather

    tensors = [convert_to_tensor(t) for t in tensor_list]
    if not tensors:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    lengths = {int(t.shape[0]) for t in tensors if t.shape.rank and t.shape[0] is not None}
    if len(lengths) > 1:
        raise ValueError(f"slice_input_producer: all tensors must have the same size in dimension 0, got "
                         f"{[t.shape for t in tensors]}")
    with get_default_graph().name_scope(name or "input_producer"):
        limit = lengths.pop() if lengths else shape(tensors[0], out_type=dtypes.int32)[0]
        queue = range_input_producer(limit, num_epochs, shuffle, seed, capacity, shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]
