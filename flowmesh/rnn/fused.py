"""The fused fast path of ``dynamic_rnn``: one ``FusedLSTM`` op instead of a loop.

Taken when the computation is exactly torch's LSTM (see
:func:`flowmesh.rnn.cells.uses_default_math`): a ``BasicLSTMCell`` or an ``LSTMCell``
without peepholes, clipping or projection, tanh activation, one input tensor of rank 3
with a known depth, float32/float64; a ``MultiRNNCell`` (tuple state) of such cells is a
chain of fused ops, one per layer. ``sequence_length`` is handled by the kernel. GRU
cells never take it: TensorFlow's ``GRUCell`` applies the reset gate to the state before
the candidate's matmul, torch's GRU after it, so the results differ. Wrapped cells take
the loop. ``FLOWMESH_FUSED_RNN=0`` turns the path off.
"""

from __future__ import annotations

from typing import Any

from flowmesh import config
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops.rnn_ops import fused_lstm
from flowmesh.rnn.cell_base import LSTMStateTuple
from flowmesh.rnn.cells import uses_default_math
from flowmesh.rnn.multi_cell import MultiRNNCell


def can_fuse(cell: Any, flat: list[Tensor]) -> bool:
    """True when ``dynamic_rnn(cell, flat[0])`` equals a chain of ``FusedLSTM`` ops."""
    if not config.FUSED_RNN.get() or len(flat) != 1:
        return False
    x = flat[0]
    if x.shape.rank != 3 or x.shape.as_list()[-1] is None:
        return False
    layers = _layers(cell)
    return bool(layers) and all(uses_default_math(c) and c.built and x.dtype == _dtype(c._kernel)
                                for c in layers)


def _dtype(variable: Any) -> Any:
    return getattr(variable.dtype, "base_dtype", variable.dtype)


def _layers(cell: Any) -> list[Any]:
    """The LSTM cells of ``cell`` in depth order ([] when it is not a plain stack of them)."""
    if isinstance(cell, MultiRNNCell):
        if not cell._state_is_tuple or not cell.cells:
            return []
        cells = cell.cells
        return cells if len(set(map(id, cells))) == len(cells) else []
    return [cell]


def fused_dynamic_rnn(cell: Any, flat: list[Tensor], state: Any,
                      lengths: Tensor | None) -> tuple[Tensor, Any] | None:
    """``(time-major outputs, final state)`` from fused ops, or None when the cell's math
    differs from torch's kernel."""
    if not can_fuse(cell, flat):
        return None
    layers = _layers(cell)
    states = list(state) if isinstance(cell, MultiRNNCell) else [state]
    x, finals = flat[0], []
    for layer, layer_state in zip(layers, states):
        result = _fused_layer(layer, x, layer_state, lengths)
        if result is None:
            return None
        x, final = result
        finals.append(final)
    return x, tuple(finals) if isinstance(cell, MultiRNNCell) else finals[0]


def _fused_layer(cell: Any, x: Tensor, state: Any, lengths: Tensor | None) -> Any:
    if cell._state_is_tuple:
        c0, h0 = state
    else:
        c0, h0 = array_ops.split(state, 2, axis=1)
    c0, h0 = convert_to_tensor(c0), convert_to_tensor(h0)
    if len({x.dtype, c0.dtype, h0.dtype}) != 1:
        return None
    kernel, bias = convert_to_tensor(cell._kernel), convert_to_tensor(cell._bias)
    y, c, h = fused_lstm(x, c0, h0, kernel, bias, lengths, cell._forget_bias)
    steps, batch = x.shape.as_list()[:2]
    units = cell.output_size
    y.set_shape(TensorShape([steps, batch, units]))
    for t in (c, h):
        t.set_shape(TensorShape([batch, units]).merge_with(c0.shape))
    final = LSTMStateTuple(c, h) if cell._state_is_tuple else array_ops.concat([c, h], 1)
    return y, final
