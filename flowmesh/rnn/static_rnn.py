"""``tf.nn.static_rnn`` and ``tf.nn.static_bidirectional_rnn``: the cell unrolled in
Python, one call per time step, sharing one set of variables (``rnn/<cell>/...``,
``bidirectional_rnn/{fw,bw}/<cell>/...``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, manip_ops
from flowmesh.ops import variable_scope as vs
from flowmesh.rnn._common import (
    batch_size_of,
    check_cell,
    copy_through,
    first_state,
    sequence_lengths,
)


def static_rnn(cell: Any, inputs: Any, initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """Runs ``cell`` over a Python list of time steps.

    Args:
        cell: an RNNCell.
        inputs: a list of ``T`` tensors ``[batch, depth]`` (or nested structures of them).
        initial_state: the first state (default: the cell's zero state).
        dtype: dtype of the zero state; required without ``initial_state``.
        sequence_length: ``[batch]`` int lengths: past its end a sequence's outputs are
            zero and its state stays the last valid one.
        scope: variable scope (default ``"rnn"``).

    Returns:
        ``(outputs, state)``: the list of ``T`` outputs and the final state.

    Raises:
        TypeError: ``cell`` is not a cell or ``inputs`` is not a list.
        ValueError: empty ``inputs``, no ``dtype`` and no ``initial_state``, a bad
            ``sequence_length``.
    """
    check_cell(cell)
    if not nest.is_nested(inputs):
        raise TypeError("static_rnn: inputs must be a sequence (a list of [batch, depth] "
                        "tensors, e.g. tf.unstack(x, axis=1))")
    if not inputs:
        raise ValueError("static_rnn: inputs must not be empty")
    with vs.variable_scope(scope or "rnn") as varscope:
        first = [convert_to_tensor(t) for t in nest.flatten(inputs[0])]
        for t in first:
            if t.shape.rank is not None and t.shape.rank < 2:
                raise ValueError(f"static_rnn: each input must be at least [batch, depth], got "
                                 f"{t.name} with shape {t.shape}")
        batch_size = batch_size_of(first, 0)
        state = first_state(cell, initial_state, batch_size, dtype, "static_rnn")
        lengths = sequence_lengths(sequence_length, batch_size, "static_rnn")
        outputs = []
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            if lengths is not None:
                output, new_state = copy_through(time, lengths, state, output, new_state)
            state = new_state
            outputs.append(output)
        return outputs, state


def _reverse_seq(sequence: list[Any], lengths: Any) -> list[Any]:
    """Reverses a list of time steps (each sequence within its own length)."""
    if lengths is None:
        return list(reversed(sequence))
    flat_steps = [nest.flatten(step) for step in sequence]
    reversed_parts = []
    for parts in zip(*flat_steps):
        stacked = array_ops.stack([convert_to_tensor(p) for p in parts])
        flipped = manip_ops.reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)
        pieces = array_ops.unstack(flipped, num=len(sequence))
        for piece, part in zip(pieces, parts):
            piece.set_shape(convert_to_tensor(part).shape)
        reversed_parts.append(pieces)
    return [nest.pack_sequence_as(sequence[t], [parts[t] for parts in reversed_parts])
            for t in range(len(sequence))]


def static_bidirectional_rnn(cell_fw: Any, cell_bw: Any, inputs: Any, initial_state_fw: Any = None,
                             initial_state_bw: Any = None, dtype: Any = None,
                             sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Any], Any, Any]:
    """A forward and a backward ``static_rnn`` whose outputs are concatenated per step.

    Args:
        cell_fw, cell_bw: the forward and backward cells.
        inputs: a list of ``T`` tensors ``[batch, depth]``.
        initial_state_fw, initial_state_bw, dtype, sequence_length: as ``static_rnn``
            (the backward pass reverses each sequence within its length).
        scope: variable scope (default ``"bidirectional_rnn"``; the passes use ``fw`` and
            ``bw`` inside it).

    Returns:
        ``(outputs, output_state_fw, output_state_bw)``; ``outputs[t]`` is
        ``concat([fw_t, bw_t], 1)``.
    """
    check_cell(cell_fw, "cell_fw")
    check_cell(cell_bw, "cell_bw")
    if not nest.is_nested(inputs) or not inputs:
        raise TypeError("static_bidirectional_rnn: inputs must be a non-empty list of tensors")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = None if sequence_length is None else convert_to_tensor(sequence_length)
            reversed_inputs = _reverse_seq(list(inputs), lengths)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_seq(tmp, lengths)
    outputs = [nest.pack_sequence_as(fw, [array_ops.concat([f, b], 1) for f, b in
                                          zip(nest.flatten(fw), nest.flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def static_state_saving_rnn(cell: Any, inputs: Any, state_saver: Any, state_name: Any,
                            sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """A ``static_rnn`` whose initial state comes from ``state_saver.state(name)`` and whose
    final state goes to ``state_saver.save_state(name, value)`` (for sequences split into
    segments: the saver carries the state from one segment to the next).

    Args:
        cell: an RNNCell.
        inputs: a list of ``T`` tensors ``[batch, depth]``.
        state_saver: an object with ``state(name) -> Tensor`` and ``save_state(name, value)
            -> op`` (e.g. variables behind a small class).
        state_name: the name of the state, or names in the structure of
            ``cell.state_size`` (e.g. ``("c", "h")`` for an LSTM).
        sequence_length, scope: as :func:`static_rnn`.

    Returns:
        ``(outputs, state)`` as :func:`static_rnn`; the last output and the state run after
        the save ops.

    Raises:
        ValueError: ``state_name`` does not match the structure of ``cell.state_size``.
    """
    from flowmesh.core.graph import control_dependencies

    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError("Argument `state_name` should be the same type as `cell.state_size`. "
                         f"Received: state_name={state_name!s}, cell.state_size={state_size!s}.")
    names = nest.flatten(state_name)
    if state_is_tuple:
        if len(names) != len(nest.flatten(state_size)):
            raise ValueError("Number of elements in argument `state_name` and `cell.state_size` are "
                             f"mismatched. Received state_name={state_name} with {len(names)} elements "
                             f"and cell.state_size={state_size} with "
                             f"{len(nest.flatten(state_size))} elements.")
        initial_state = nest.pack_sequence_as(state_size, [state_saver.state(n) for n in names])
    else:
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    flat_state = nest.flatten(state)
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flat_state)]
    with control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last, [array_ops.identity(o) for o in nest.flatten(last)])
        state = nest.pack_sequence_as(state, [array_ops.identity(s) for s in flat_state])
    return outputs, state
