"""``tf.nn.raw_rnn``: a recurrent loop whose inputs, finishing and emitted outputs are
decided step by step by a user ``loop_fn`` (for decoders that feed back their outputs).

``loop_fn(time, cell_output, cell_state, loop_state)`` returns ``(elements_finished,
next_input, next_cell_state, emit_output, next_loop_state)``; it is called once before
the loop (``cell_output``, ``cell_state`` and ``loop_state`` None: it gives the first
input and the initial state) and after every cell step. The loop runs while some batch
element is unfinished; finished elements emit zeros and keep their state, as in
TensorFlow. As in TensorFlow, the emits are written into ``TensorArray`` loop variables
(``dynamic_size``, one element per step), and ``loop_state`` may hold TensorArrays too.
Unlike TensorFlow's, the emit arrays are made with ``clear_after_read=False``, so the
returned arrays can be read more than once (``stack()`` and ``read(i)`` in one run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, math_ops, reduction_ops, select_ops
from flowmesh.ops import variable_scope as vs
from flowmesh.ops.tensor_array import TensorArray
from flowmesh.ops.while_loop import while_loop
from flowmesh.rnn._common import check_cell
from flowmesh.rnn.multi_cell import prebuild_cell


def _zero_emits(emit_structure: Any, cell: Any, batch: Any, state_dtype: Any) -> tuple[Any, list]:
    """The zeros ``[batch, ...]`` finished elements emit. As in TensorFlow, the emit
    structure's tensors give each emit's per-element shape and dtype (``cell.output_size``
    and the state's dtype when ``loop_fn`` gave no structure)."""
    if emit_structure is not None:
        specs = [(t.shape, t.dtype) for t in map(convert_to_tensor, nest.flatten(emit_structure))]
    else:
        emit_structure = cell.output_size
        specs = [(as_shape(size), state_dtype) for size in nest.flatten(emit_structure)]
    zeros = []
    for shape, dtype in specs:
        dims = shape.as_list()
        if any(d is None for d in dims):
            raise ValueError(f"raw_rnn: the emit structure needs fully defined shapes, got {shape}")
        zero = array_ops.zeros(array_ops.concat([array_ops.reshape(batch, [1]), dims], 0),
                               dtype=dtype)
        zero.set_shape(TensorShape([batch if isinstance(batch, int) else None] + dims))
        zeros.append(zero)
    return emit_structure, zeros


def raw_rnn(cell: Any, loop_fn: Callable[..., Any], parallel_iterations: int | None = None,
            swap_memory: bool = False, scope: Any = None) -> tuple[Any, Any, Any]:
    """Runs ``cell`` in a ``While`` loop driven by ``loop_fn`` (``tf.nn.raw_rnn``).

    Args:
        cell: an RNNCell.
        loop_fn: ``(time, cell_output, cell_state, loop_state) -> (elements_finished,
            next_input, next_cell_state, emit_output, next_loop_state)``.
        parallel_iterations, swap_memory: accepted as ``tf.while_loop`` does.
        scope: variable scope (default ``"rnn"``).

    Returns:
        ``(emit_ta, final_state, final_loop_state)``: the emitted outputs (a
        ``TensorArray`` per element of the emit structure; ``.stack()`` gives
        ``[time, batch, ...]``), the final cell state and the final loop state (None when
        ``loop_fn`` gave none).

    Raises:
        TypeError: ``cell`` is not a cell or ``loop_fn`` is not callable.
        ValueError: ``loop_fn``'s first call gave no ``next_cell_state``.
    """
    check_cell(cell)
    if not callable(loop_fn):
        raise TypeError(f"Argument `loop_fn` must be a callable. Received: {loop_fn}.")
    with vs.variable_scope(scope or "rnn"):
        from flowmesh.ops.constant_op import constant

        time = constant(0, dtype=dtypes.int32, name="time")
        finished, first_input, state, emit_structure, init_loop_state = loop_fn(time, None, None, None)
        if state is None:
            raise ValueError("raw_rnn: loop_fn(time=0, ...) must return the initial cell state "
                             "(its third element), e.g. cell.zero_state(batch_size, tf.float32)")
        flat_input = [convert_to_tensor(t) for t in nest.flatten(first_input)]
        batch = flat_input[0].shape.as_list()[0]
        batch = batch if batch is not None else array_ops.shape(flat_input[0])[0]
        state = nest.map_structure(convert_to_tensor, state)
        loop_state = init_loop_state if init_loop_state is not None else \
            constant(0, dtype=dtypes.int32)
        state_dtype = nest.flatten(state)[0].dtype
        emit_structure, zeros = _zero_emits(emit_structure, cell, batch, state_dtype)
        prebuild_cell(cell, flat_input[0].shape, state_dtype, batch)
        loop = _Loop(cell, loop_fn, first_input, state, loop_state, emit_structure, zeros)
        final = while_loop(loop.condition, loop.body,
                           (time, convert_to_tensor(finished), *loop.flat_vars()),
                           parallel_iterations=parallel_iterations or 32, swap_memory=swap_memory)
        emits, final_state, final_loop_state = loop.results(final)
    return emits, final_state, (None if init_loop_state is None else final_loop_state)


class _Loop:
    """The ``While`` body of ``raw_rnn`` over flat loop variables ``(time, finished,
    *inputs, *state, *loop_state)``; the emits are accumulators, not loop variables."""

    def __init__(self, cell: Any, loop_fn: Callable[..., Any], inputs: Any, state: Any,
                 loop_state: Any, emit_structure: Any, zeros: list[Tensor]):
        self.cell, self.loop_fn = cell, loop_fn
        self.inputs, self.state, self.loop_state = inputs, state, loop_state
        self.emit_structure, self.zeros = emit_structure, zeros
        self.sizes = (len(nest.flatten(inputs)), len(nest.flatten(state)))

    def flat_vars(self) -> list[Any]:
        emit_tas = [TensorArray(z.dtype, size=0, dynamic_size=True, element_shape=z.shape,
                                clear_after_read=False, name="rnn_output_ta") for z in self.zeros]
        return [_loop_value(t) for t in nest.flatten(self.inputs) + nest.flatten(self.state)
                + nest.flatten(self.loop_state)] + emit_tas

    def _unflatten(self, flat: list[Tensor]) -> tuple[Any, Any, Any]:
        n_in, n_state = self.sizes
        end = len(flat) - len(self.zeros)
        return (nest.pack_sequence_as(self.inputs, list(flat[:n_in])),
                nest.pack_sequence_as(self.state, list(flat[n_in:n_in + n_state])),
                nest.pack_sequence_as(self.loop_state, list(flat[n_in + n_state:end])))

    def condition(self, time: Tensor, finished: Tensor, *_: Tensor) -> Tensor:
        return math_ops.logical_not(reduction_ops.reduce_all(finished))

    def body(self, time: Tensor, finished: Tensor, *flat: Tensor) -> tuple[Tensor, ...]:
        inputs, state, loop_state = self._unflatten(list(flat))
        emit_tas = list(flat[len(flat) - len(self.zeros):])
        output, cell_state = self.cell(inputs, state)
        next_time = time + 1
        next_finished, next_input, next_state, emit, next_loop_state = self.loop_fn(
            next_time, output, cell_state, loop_state)
        loop_state = loop_state if next_loop_state is None else next_loop_state
        if emit is None:
            emit = output
        emit_flat = [select_ops.where(finished, z, convert_to_tensor(e))
                     for z, e in zip(self.zeros, nest.flatten(emit))]
        emit_tas = [ta.write(time, e) for ta, e in zip(emit_tas, emit_flat)]
        kept = [select_ops.where(finished, old, convert_to_tensor(new)) if old.shape.rank != 0
                else convert_to_tensor(new)
                for old, new in zip(nest.flatten(state), nest.flatten(next_state))]
        finished = math_ops.logical_or(finished, convert_to_tensor(next_finished))
        rest = [convert_to_tensor(t) for t in nest.flatten(next_input)] + kept + \
            [_loop_value(t) for t in nest.flatten(loop_state)] + emit_tas
        return (next_time, finished, *rest)

    def results(self, final: Any) -> tuple[Any, Any, Any]:
        flat = list(final[2:])
        emit_tas = flat[len(flat) - len(self.zeros):]
        _, state, loop_state = self._unflatten(flat)
        return nest.pack_sequence_as(self.emit_structure, emit_tas), state, loop_state


def _loop_value(value: Any) -> Any:
    return value if isinstance(value, TensorArray) else convert_to_tensor(value)
