"""``FusedLSTM``: a whole LSTM sequence as one op (the fast path of ``dynamic_rnn``).

Inputs ``x [T, B, D]``, ``c0 [B, H]``, ``h0 [B, H]``, ``kernel [D+H, 4H]`` and
``bias [4H]`` in TensorFlow's ``LSTMCell`` layout (gate columns ``i, j, f, o``; the attr
``gate_order="ifco"`` takes Keras's ``i, f, c, o`` layout instead), and
optionally ``sequence_length [B]`` (int32). The attr ``forget_bias`` is added to ``f``.
Outputs: ``y [T, B, H]`` (zero past each sequence's end), the final ``c`` and ``h`` (those
after each sequence's last valid step) and ``reserve``, a ``variant`` holding what the
backward pass needs (like ``CudnnRNN``'s reserve space).

The gradient is a second op, ``FusedLSTMGrad(reserve, dy, dc, dh)``, registered in the
gradient table; it returns ``dx, dc0, dh0, dkernel, dbias``. It runs on the forward op's
device (``colocate_with``), which holds the reserve. Second-order gradients through it are
not supported (a clear error).

``FusedGRU`` is the same for Keras's ``reset_after`` GRU (torch's GRU formulation): inputs
``x, h0, kernel [D, 3H], recurrent_kernel [H, 3H], bias [2, 3H]`` (+ lengths), outputs
``y, h_final, reserve``; ``FusedGRUGrad(reserve, dy, dh)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import make_op


def _dims(t: Tensor) -> list[Any]:
    return t.shape.as_list() if t.shape.rank is not None else [None]


def _fused_lstm_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, c0, h0, kernel, bias = inputs[:5]
    for t, rank, what in ((x, 3, "x [time, batch, depth]"), (c0, 2, "c0 [batch, units]"),
                          (h0, 2, "h0 [batch, units]"), (kernel, 2, "kernel [depth+units, 4*units]"),
                          (bias, 1, "bias [4*units]")):
        if t.shape.rank not in (None, rank):
            raise InvalidArgumentError(f"FusedLSTM: {what} must have rank {rank}, got {t.name} "
                                       f"with shape {t.shape}")
    if len({x.dtype, c0.dtype, h0.dtype, kernel.dtype, bias.dtype}) != 1:
        raise TypeError("FusedLSTM: x, c0, h0, kernel and bias must have one dtype, got "
                        f"{[t.dtype.name for t in inputs[:5]]}")
    if len(inputs) == 6 and inputs[5].dtype != dtypes.int32:
        raise TypeError(f"FusedLSTM: sequence_length must be int32, got {inputs[5].dtype.name}")
    t_, b = (_dims(x) + [None, None])[:2]
    units = _dims(h0)[-1] if h0.shape.rank else None
    state = TensorShape([b, units])
    return [(x.dtype, TensorShape([t_, b, units])), (x.dtype, state), (x.dtype, state),
            (dtypes.variant, TensorShape([]))]


def _fused_lstm_grad(op: Operation, dy: Any, dc: Any, dh: Any, _reserve: Any) -> list[Any]:
    grads = [array_ops.zeros_like(op.outputs[i]) if g is None else g
             for i, g in enumerate((dy, dc, dh))]
    graph = get_default_graph()
    with graph.colocate_with(op):
        grad_op = make_op("FusedLSTMGrad", [op.outputs[3]] + grads, {},
                          name=f"{op.name.rsplit('/', 1)[-1]}_grad")
    out = list(grad_op.outputs)
    return out + [None] * (len(op.inputs) - 5)


register_op("FusedLSTM", _fused_lstm_shape, grad=_fused_lstm_grad)


def _fused_lstm_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    """The specs of the forward op's first 5 inputs; unknown shapes when the reserve comes
    from elsewhere (a ``cond`` gradient branch receives it as a branch input)."""
    forward = inputs[0].op
    if forward.type in ("FusedLSTM", "FusedGRU"):
        return [(t.dtype, t.shape) for t in forward.inputs[:5]]
    return [(inputs[1].dtype, TensorShape(None))] * 5


def _no_second_order(op: Operation, *grads: Any) -> list[Any]:
    raise LookupError(
        f"No gradient for '{op.name}' ({op.type}): second-order gradients through a fused "
        "RNN are not supported. Set FLOWMESH_FUSED_RNN=0 to build dynamic_rnn as a loop."
    )


register_op("FusedLSTMGrad", _fused_lstm_grad_shape, grad=_no_second_order)


def fused_lstm(x: Tensor, c0: Tensor, h0: Tensor, kernel: Tensor, bias: Tensor,
               sequence_length: Tensor | None = None, forget_bias: float = 1.0,
               gate_order: str = "ijfo", name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Runs an LSTM (TensorFlow's ``LSTMCell`` math) over ``x [T, B, D]``.

    Returns:
        ``(y [T, B, H], c_final [B, H], h_final [B, H])``.
    """
    inputs = [x, c0, h0, kernel, bias]
    if sequence_length is not None:
        inputs.append(sequence_length)
    if gate_order not in ("ijfo", "ifco"):
        raise ValueError(f"gate_order must be 'ijfo' (tf.nn.rnn_cell) or 'ifco' (Keras), got "
                         f"{gate_order!r}")
    op = make_op("FusedLSTM", inputs, {"forget_bias": float(forget_bias), "gate_order": gate_order},
                 name=name or "FusedLSTM")
    return op.outputs[0], op.outputs[1], op.outputs[2]


# --- FusedGRU ----------------------------------------------------------------------------------
def _fused_gru_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, h0, kernel, recurrent, bias = inputs[:5]
    for t, rank, what in ((x, 3, "x [time, batch, depth]"), (h0, 2, "h0 [batch, units]"),
                          (kernel, 2, "kernel [depth, 3*units]"),
                          (recurrent, 2, "recurrent_kernel [units, 3*units]"),
                          (bias, 2, "bias [2, 3*units]")):
        if t.shape.rank not in (None, rank):
            raise InvalidArgumentError(f"FusedGRU: {what} must have rank {rank}, got {t.name} "
                                       f"with shape {t.shape}")
    if len({t.dtype for t in inputs[:5]}) != 1:
        raise TypeError("FusedGRU: x, h0, kernel, recurrent_kernel and bias must have one "
                        f"dtype, got {[t.dtype.name for t in inputs[:5]]}")
    t_, b = (_dims(x) + [None, None])[:2]
    units = _dims(h0)[-1] if h0.shape.rank else None
    return [(x.dtype, TensorShape([t_, b, units])), (x.dtype, TensorShape([b, units])),
            (dtypes.variant, TensorShape([]))]


def _fused_gru_grad(op: Operation, dy: Any, dh: Any, _reserve: Any) -> list[Any]:
    grads = [array_ops.zeros_like(op.outputs[i]) if g is None else g
             for i, g in enumerate((dy, dh))]
    with get_default_graph().colocate_with(op):
        grad_op = make_op("FusedGRUGrad", [op.outputs[2]] + grads, {},
                          name=f"{op.name.rsplit('/', 1)[-1]}_grad")
    return list(grad_op.outputs) + [None] * (len(op.inputs) - 5)


register_op("FusedGRU", _fused_gru_shape, grad=_fused_gru_grad)
register_op("FusedGRUGrad", _fused_lstm_grad_shape, grad=_no_second_order)


def fused_gru(x: Tensor, h0: Tensor, kernel: Tensor, recurrent_kernel: Tensor, bias: Tensor,
              sequence_length: Tensor | None = None,
              name: str | None = None) -> tuple[Tensor, Tensor]:
    """Runs Keras's ``reset_after`` GRU (gates ``z, r, h``; ``bias [2, 3H]`` = input and
    recurrent biases) over ``x [T, B, D]``: torch's GRU computes exactly this.

    Returns:
        ``(y [T, B, H], h_final [B, H])``.
    """
    inputs = [x, h0, kernel, recurrent_kernel, bias]
    if sequence_length is not None:
        inputs.append(sequence_length)
    op = make_op("FusedGRU", inputs, {}, name=name or "FusedGRU")
    return op.outputs[0], op.outputs[1]
