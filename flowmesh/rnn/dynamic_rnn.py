"""``tf.nn.dynamic_rnn`` and ``tf.nn.bidirectional_dynamic_rnn`` on ``tf.while_loop``.

The loop's body reads time step ``t`` of the (time-major) inputs with ``gather``, calls
the cell and, with ``sequence_length``, copies finished sequences through (zero output,
last valid state). The per-step outputs are the loop's accumulators stacked into one
``[time, batch, ...]`` tensor (see :mod:`flowmesh.ops.while_grad`), so gradients flow
back through the loop. The cell's variables are created before the loop
(:meth:`~flowmesh.rnn.cell_base.RNNCell.prebuild`) with TensorFlow's names
(``rnn/basic_lstm_cell/kernel``).

When the whole computation is one standard LSTM (see :mod:`flowmesh.rnn.fused`), the
loop is replaced by a single fused op running torch's LSTM kernel.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, gather_ops, manip_ops
from flowmesh.ops import variable_scope as vs
from flowmesh.ops.while_accumulators import accumulator_stack
from flowmesh.ops.while_grad import while_accumulator
from flowmesh.ops.while_loop import while_loop
from flowmesh.rnn._common import (
    batch_size_of,
    check_cell,
    copy_through,
    first_state,
    sequence_lengths,
)
from flowmesh.rnn.cell_base import check_float
from flowmesh.rnn.multi_cell import prebuild_cell


def _swap_time_batch(tensor: Tensor) -> Tensor:
    rank = tensor.shape.rank
    if rank is None:
        raise ValueError(f"dynamic_rnn: the rank of {tensor.name} must be known (at least 2: "
                         "batch and time); give the placeholder a shape")
    if rank < 2:
        raise ValueError(f"dynamic_rnn: expected an input of rank >= 2 ([batch, time, ...]), got "
                         f"{tensor.name} with shape {tensor.shape}")
    return array_ops.transpose(tensor, [1, 0] + list(range(2, rank)))


def _time_steps(flat: list[Tensor]) -> tuple[int | None, Tensor]:
    static = None
    for t in flat:
        steps = t.shape.as_list()[0] if t.shape.rank else None
        if steps is not None and static is not None and steps != static:
            raise ValueError(f"dynamic_rnn: all inputs must have the same number of time steps, "
                             f"got {static} and {steps} ({t.name})")
        static = steps if steps is not None else static
    from flowmesh.ops.constant_op import constant

    if static is not None:
        return int(static), constant(int(static), dtype=dtypes.int32, name="time_steps")
    return None, array_ops.shape(flat[0], out_type=dtypes.int32)[0]


def dynamic_rnn(cell: Any, inputs: Any, sequence_length: Any = None, initial_state: Any = None,
                dtype: Any = None, parallel_iterations: int | None = None,
                swap_memory: bool = False, time_major: bool = False,
                scope: Any = None) -> tuple[Any, Any]:
    """Runs ``cell`` over the time dimension of ``inputs`` in a ``tf.while_loop``.

    Args:
        cell: an RNNCell.
        inputs: ``[batch, time, ...]`` (``[time, batch, ...]`` with ``time_major``), or a
            nested structure of such tensors.
        sequence_length: ``[batch]`` int lengths: outputs past a sequence's end are zero
            and its final state is the state after its last valid step.
        initial_state: the first state (default: the cell's zero state).
        dtype: dtype of the zero state; required without ``initial_state``.
        parallel_iterations, swap_memory: passed to ``tf.while_loop``.
        time_major: the layout of ``inputs`` and of the returned outputs.
        scope: variable scope (default ``"rnn"``).

    Returns:
        ``(outputs, state)``: outputs ``[batch, time, output_size]`` (time-major with
        ``time_major``) and the final state in the structure of ``cell.state_size``.

    Raises:
        TypeError: ``cell`` is not a cell.
        ValueError: inputs without known rank >= 2, mismatched time steps, no ``dtype``
            and no ``initial_state``, or a ``sequence_length`` that is not a vector.
    """
    check_cell(cell)
    with vs.variable_scope(scope or "rnn"):
        flat = [convert_to_tensor(t, name="input") for t in nest.flatten(inputs)]
        if not time_major:
            flat = [_swap_time_batch(t) for t in flat]
        batch_size = batch_size_of(flat, 1)
        state = first_state(cell, initial_state, batch_size, dtype, "dynamic_rnn")
        lengths = sequence_lengths(sequence_length, batch_size, "dynamic_rnn")
        check_float([flat, state], "dynamic_rnn")
        state_dtype = nest.flatten(state)[0].dtype
        prebuild_cell(cell, flat[0].shape[1:], state_dtype, batch_size)
        from flowmesh.rnn import fused

        result = fused.fused_dynamic_rnn(cell, flat, state, lengths)
        if result is None:
            result = rnn_loop(cell, inputs, flat, state, lengths, parallel_iterations or 32,
                               swap_memory)
        outputs, final_state = result
        if not time_major:
            outputs = nest.map_structure(_swap_time_batch, outputs)
        return outputs, final_state


def rnn_loop(cell: Any, structure: Any, flat: list[Tensor], state: Any, lengths: Tensor | None,
              parallel_iterations: int, swap_memory: bool) -> tuple[Any, Any]:
    """The ``While`` loop over time steps: returns time-major outputs and the final state."""
    static_steps, steps = _time_steps(flat)
    traced: list[Any] = []

    def body(time: Tensor, *flat_state: Tensor) -> tuple[Any, ...]:
        old_state = nest.pack_sequence_as(state, list(flat_state))
        step_inputs = [gather_ops.gather(t, time) for t in flat]
        for value, source in zip(step_inputs, flat):
            value.set_shape(source.shape[1:])
        output, new_state = cell(nest.pack_sequence_as(structure, step_inputs), old_state)
        if lengths is not None:
            output, new_state = copy_through(time, lengths, old_state, output, new_state)
        flat_out = [array_ops.identity(convert_to_tensor(o)) for o in nest.flatten(output)]
        traced.append((output, flat_out))
        new_flat = [convert_to_tensor(s) for s in nest.flatten(new_state)]
        return (time + 1, *new_flat)

    from flowmesh.ops.constant_op import constant

    loop_vars = (constant(0, dtype=dtypes.int32, name="time"), *nest.flatten(state))
    final = while_loop(lambda time, *_: time < steps, body, loop_vars,
                       parallel_iterations=parallel_iterations, swap_memory=swap_memory)
    op = final[0].op
    output_structure, flat_out = traced[0]
    stacked = []
    for tensor in flat_out:
        out = accumulator_stack(while_accumulator(op, tensor), tensor.dtype, tensor.shape)
        out.set_shape(TensorShape([static_steps]).concatenate(tensor.shape))
        stacked.append(out)
    final_state = nest.pack_sequence_as(state, list(final[1:]))
    return nest.pack_sequence_as(output_structure, stacked), final_state


def _reverse(tensor: Tensor, lengths: Any, seq_axis: int, batch_axis: int) -> Tensor:
    if lengths is not None:
        return manip_ops.reverse_sequence(tensor, lengths, seq_axis=seq_axis,
                                          batch_axis=batch_axis)
    return manip_ops.reverse(tensor, axis=[seq_axis])


def bidirectional_dynamic_rnn(cell_fw: Any, cell_bw: Any, inputs: Any,
                              sequence_length: Any = None, initial_state_fw: Any = None,
                              initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: int | None = None, swap_memory: bool = False,
                              time_major: bool = False, scope: Any = None) -> tuple[Any, Any]:
    """A forward and a backward ``dynamic_rnn`` (the backward one on each sequence
    reversed within its length).

    Args:
        cell_fw, cell_bw: the forward and backward cells.
        inputs, sequence_length, dtype, parallel_iterations, swap_memory, time_major: as
            :func:`dynamic_rnn`.
        initial_state_fw, initial_state_bw: first states of the two passes.
        scope: variable scope (default ``"bidirectional_rnn"``, passes in ``fw`` / ``bw``).

    Returns:
        ``((output_fw, output_bw), (output_state_fw, output_state_bw))``; ``output_bw``
        is in the original time order.
    """
    check_cell(cell_fw, "cell_fw")
    check_cell(cell_bw, "cell_bw")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length, initial_state=initial_state_fw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        lengths = None if sequence_length is None else convert_to_tensor(sequence_length)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(
                lambda t: _reverse(convert_to_tensor(t), lengths, time_axis, batch_axis), inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = nest.map_structure(lambda t: _reverse(t, lengths, time_axis, batch_axis), tmp)
    return (output_fw, output_bw), (state_fw, state_bw)
