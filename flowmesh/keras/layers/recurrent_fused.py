"""The fused kernels (torch's LSTM/GRU) behind the Keras recurrent layers, and their use on
padded sequences.

A Keras ``LSTM`` whose math is torch's (``activation="tanh"``,
``recurrent_activation="sigmoid"``) and a ``GRU`` with ``reset_after=True`` and those
activations run as one ``FusedLSTM``/``FusedGRU`` op over the whole sequence. Recurrent
dropout needs the loop (a new mask product at each step); input dropout with one mask
(``implementation=2``) multiplies the inputs first, as tf-keras's cuDNN path does.

Masked sequences: when the mask (in processing order) is a prefix of every row - padding
only at the end, the usual ``Embedding(mask_zero=True)`` case - the fused kernel runs on
packed sequences (``sequence_length`` = the row's valid steps) and the outputs at padded
steps are replaced as tf-keras's masked loop defines them (the last valid output, or zeros
with ``zero_output_for_mask``). Other masks need the masked ``While`` loop: it is built
too, runs a single step when the mask is a prefix, and a ``tf.cond`` on the mask picks the
result at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh import config as settings
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations
from flowmesh.keras.layers.recurrent_cells import GRUCell, LSTMCell
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops, select_ops


def fusable(cell: Any, x: Any) -> bool:
    """Whether ``cell``'s math is torch's LSTM/GRU and ``x`` a float ``[T, B, D]`` tensor."""
    if not settings.FUSED_RNN.get() or x.shape.rank != 3 or \
            x.dtype not in (dtypes.float32, dtypes.float64):
        return False
    if type(cell) not in (LSTMCell, GRUCell) or cell.activation is not activations.tanh or \
            getattr(cell, "recurrent_activation", None) is not activations.sigmoid:
        return False
    return type(cell) is LSTMCell or (type(cell) is GRUCell and cell.reset_after and
                                      cell.bias is not None)


def _dropped_inputs(cell: Any, x: Any) -> Any:
    """``x`` with the input dropout mask applied, or None when dropout needs the loop."""
    inputs_masks, recurrent_masks = getattr(cell, "_dropout_masks", (None, None))
    if recurrent_masks is not None or (inputs_masks is not None and len(inputs_masks) > 1):
        return None
    return x if inputs_masks is None else x * inputs_masks[0]


def fused(cell: Any, x: Any, states: list[Any], lengths: Any = None) -> tuple[Any, list[Any]] | None:
    """``(outputs [T, B, units], final states)`` from the fused kernel, or None when the
    cell (or its dropout) needs the loop."""
    if not fusable(cell, x):
        return None
    x = _dropped_inputs(cell, x)
    if x is None:
        return None
    from flowmesh.ops.rnn_ops import fused_gru, fused_lstm

    if type(cell) is LSTMCell:
        h0, c0 = (convert_to_tensor(s) for s in states)
        kernel = array_ops.concat([convert_to_tensor(cell.kernel),
                                   convert_to_tensor(cell.recurrent_kernel)], 0)
        bias = convert_to_tensor(cell.bias) if cell.bias is not None else \
            array_ops.zeros([4 * cell.units], dtype=x.dtype)
        y, c, h = fused_lstm(x, c0, h0, kernel, bias, lengths, forget_bias=0.0, gate_order="ifco")
        final = [h, c]
    else:
        y, h = fused_gru(x, convert_to_tensor(states[0]), convert_to_tensor(cell.kernel),
                         convert_to_tensor(cell.recurrent_kernel), convert_to_tensor(cell.bias),
                         lengths)
        final = [h]
    steps, batch = x.shape.as_list()[:2]
    y.set_shape(TensorShape([steps, batch, cell.units]))
    return y, final


def masked(cell: Any, x: Any, states: list[Any], mask: Any, zero_output: bool,
           loop: Callable[[Any, list[Any], Any], tuple[Any, list[Any]]],
           need_states: bool = True) -> tuple[Any, list[Any]]:
    """A masked run (``mask``: bool ``[T, B]`` in processing order): the fused kernel when
    every row's mask is a prefix, else ``loop(x, states, mask)``. Without ``need_states``
    (no ``return_state``, not stateful) an LSTM's final cell state is not computed (its
    slot holds an unrelated value)."""
    if not fusable(cell, x) or _dropped_inputs(cell, x) is None:
        return loop(x, states, mask)
    from flowmesh.ops.cond import cond

    lengths = reduction_ops.reduce_sum(cast_ops.cast(mask, dtypes.int32), axis=0)
    steps = array_ops.shape(mask)[0]
    prefix = array_ops.transpose(manip_ops.sequence_mask(lengths, steps), [1, 0])
    is_prefix = reduction_ops.reduce_all(math_ops.equal(mask, prefix))

    # The loop cannot sit inside a cond branch (no gradient of a While there), so it runs
    # outside, over 1 step when the fused result will be taken, and the cond only picks.
    loop_steps = steps - cast_ops.cast(is_prefix, dtypes.int32) * (steps - 1)
    x_head, mask_head = x[:loop_steps], mask[:loop_steps]
    x_head.set_shape(TensorShape([None]).concatenate(x.shape[1:]))
    mask_head.set_shape(TensorShape([None]).concatenate(mask.shape[1:]))
    loop_outputs, loop_final = loop(x_head, states, mask_head)
    packed, final = _prefix_run(cell, x, states, mask, lengths, steps, zero_output, need_states)
    result = cond(is_prefix, lambda: [packed, *final], lambda: [loop_outputs, *loop_final])
    outputs = result[0]
    outputs.set_shape(TensorShape(x.shape.as_list()[:2] + [cell.units]))
    for value, state in zip(result[1:], states):
        value.set_shape(convert_to_tensor(state).shape)
    return outputs, list(result[1:])


def _prefix_run(cell: Any, x: Any, states: list[Any], mask: Any, lengths: Any, steps: Any,
                zero_output: bool, need_states: bool) -> tuple[Any, list[Any]]:
    """Keras's masked outputs and final states for prefix masks. A valid step never sees a
    padded one, so the kernel runs on the whole padded batch and each row's last valid
    output is picked out; packed sequences (slow to differentiate on CPU) only when an
    LSTM's final cell state is needed."""
    packed = need_states and type(cell) is LSTMCell
    y, final = fused(cell, x, states, lengths if packed else None)
    some = math_ops.greater(lengths, 0)
    if not packed:
        pick = array_ops.transpose(manip_ops.one_hot(lengths - 1, steps, dtype=y.dtype), [1, 0])
        last = reduction_ops.reduce_sum(y * array_ops.expand_dims(pick, -1), axis=0)
        final = [select_ops.where(some, last, convert_to_tensor(states[0])), *final[1:]]
    fill = array_ops.zeros_like(final[0])
    if not zero_output:  # the last valid output (zeros for an empty row)
        fill = select_ops.where(some, final[0], fill)
    outputs = select_ops.where_v2(array_ops.expand_dims(mask, -1), y, array_ops.expand_dims(fill, 0))
    return outputs, final
