"""Kernels of ``flowmesh/ops/rnn_ops.py``: ``FusedLSTM`` / ``FusedGRU`` on torch's fused
RNNs, and their gradients.

TensorFlow's ``LSTMCell`` (gates ``i, j, f, o``; ``c' = sigmoid(f + forget_bias) * c +
sigmoid(i) * tanh(j)``; ``h' = sigmoid(o) * tanh(c')``) is torch's LSTM with the gate
blocks reordered to ``i, f, g=j, o``, ``W_ih``/``W_hh`` the transposed input/recurrent rows
of the kernel, and ``forget_bias`` folded into the bias of ``f``. Sequence lengths run
through a packed sequence (outputs past the end are zero, the final state is each
sequence's last valid one); a zero length keeps the initial state. Keras's ``reset_after``
GRU is torch's GRU with the gate blocks ``z, r, h`` reordered to ``r, z, n``.

Float32 CPU LSTMs without sequence lengths call oneDNN's LSTM forward/backward ops directly
(``kernels/cpu/onednn_lstm.py``). Otherwise, when the graph holds a gradient of the op (its
``reserve`` output has consumers), the forward pass is recorded by torch autograd and the reserve holds the recorded outputs and
leaves; ``FusedLSTMGrad`` runs the backward pass with ``torch.autograd.grad``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.utils import rnn as torch_rnn

from flowmesh import config
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.cpu import onednn_lstm


class _Reserve:
    """What ``FusedLSTMGrad`` needs: the recorded outputs and the leaves they depend on."""

    __slots__ = ("outputs", "leaves")

    def __init__(self, outputs: tuple[torch.Tensor, ...], leaves: tuple[torch.Tensor, ...]):
        self.outputs = outputs
        self.leaves = leaves


def _torch_weights(kernel_: torch.Tensor, bias: torch.Tensor, depth: int,
                   forget_bias: float, gate_order: str = "ijfo") -> list[torch.Tensor]:
    """TensorFlow's ``[D+H, 4H]`` kernel (``i, j, f, o``; Keras: ``i, f, c, o``) as torch's
    LSTM parameters (``i, f, g, o``)."""
    if gate_order == "ifco":
        reordered = kernel_
        bi, bf, bg, bo = bias.chunk(4)
        b_ih = torch.cat([bi, bf + forget_bias, bg, bo])
    else:
        i, j, f, o = kernel_.chunk(4, dim=1)
        reordered = torch.cat([i, f, j, o], dim=1)
        bi, bj, bf, bo = bias.chunk(4)
        b_ih = torch.cat([bi, bf + forget_bias, bj, bo])
    w_ih = reordered[:depth].t()
    w_hh = reordered[depth:].t()
    return [w_ih, w_hh, b_ih, torch.zeros_like(b_ih)]


def _check(op_name: str, x: torch.Tensor, c0: torch.Tensor, kernel_: torch.Tensor) -> None:
    units = c0.shape[-1]
    if kernel_.shape != (x.shape[-1] + units, 4 * units) or c0.shape[0] != x.shape[1]:
        raise InvalidArgumentError(
            f"FusedLSTM '{op_name}': kernel {tuple(kernel_.shape)} must be [depth + units, "
            f"4 * units] for x {tuple(x.shape)} and c0 {tuple(c0.shape)}"
        )


def _lstm(x: torch.Tensor, c0: torch.Tensor, h0: torch.Tensor, weights: list[torch.Tensor],
          lengths: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    y, (h, c) = _run(torch._VF.lstm, x, [h0, c0], weights, lengths)
    return y, c, h


def _gru(x: torch.Tensor, h0: torch.Tensor, weights: list[torch.Tensor],
         lengths: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    y, (h,) = _run(torch._VF.gru, x, [h0], weights, lengths)
    return y, h


def _run(fn: Any, x: torch.Tensor, states: list[torch.Tensor], weights: list[torch.Tensor],
         lengths: torch.Tensor | None) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """torch's fused RNN ``fn`` over ``x [T, B, D]`` from ``states`` (each ``[B, H]``);
    with ``lengths``, a packed sequence: zero outputs past each end, per-row final states,
    the initial state for a zero length."""
    hx = [s.unsqueeze(0) for s in states]
    arg = tuple(hx) if len(hx) > 1 else hx[0]
    if lengths is None:
        y, *final = fn(x, arg, weights, True, 1, 0.0, False, False, False)
        return y, [f[0] for f in final]
    steps = x.shape[0]
    clamped = lengths.to(torch.int64).clamp(0, steps)
    empty = clamped == 0
    packed = torch_rnn.pack_padded_sequence(x, clamped.clamp_min(1).cpu(), enforce_sorted=False)
    order, restore = packed.sorted_indices, packed.unsorted_indices
    hx = [h.index_select(1, order) for h in hx]
    arg = tuple(hx) if len(hx) > 1 else hx[0]
    data, *final = fn(packed.data, packed.batch_sizes, arg, weights, True, 1, 0.0, False, False)
    y, _ = torch_rnn.pad_packed_sequence(
        torch_rnn.PackedSequence(data, packed.batch_sizes, order, restore), total_length=steps)
    final = [f[0].index_select(0, restore) for f in final]
    if bool(empty.any()):
        keep = empty.unsqueeze(1)
        y = torch.where(keep.unsqueeze(0), torch.zeros_like(y), y)
        final = [torch.where(keep, s0, s) for s0, s in zip(states, final)]
    return y, final


@kernel("FusedLSTM")
def _fused_lstm(ctx: KernelContext):
    forget_bias = float(ctx.attr("forget_bias"))
    gate_order = ctx.attr("gate_order", "ijfo")
    reserve_output = ctx.op.outputs[3]
    name = ctx.op.name

    def run(x: torch.Tensor, c0: torch.Tensor, h0: torch.Tensor, kernel_: torch.Tensor,
            bias: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[Any, ...]:
        _check(name, x, c0, kernel_)
        train = bool(reserve_output.consumers())
        if onednn_lstm.usable(x, c0, lengths) and config.ONEDNN_LSTM.get():
            # oneDNN keeps the workspace only in grad mode (nothing requires grad: no graph)
            with torch.set_grad_enabled(train):
                return onednn_lstm.forward(x, c0, h0, kernel_, bias, forget_bias, gate_order, train)
        if not train:
            with torch.no_grad():
                weights = _torch_weights(kernel_, bias, x.shape[-1], forget_bias, gate_order)
                y, c, h = _lstm(x, c0, h0, weights, lengths)
            return y, c, h, None
        leaves = tuple(t.detach().requires_grad_() for t in (x, c0, h0, kernel_, bias))
        with torch.enable_grad():
            weights = _torch_weights(leaves[3], leaves[4], x.shape[-1], forget_bias,
                                     gate_order)
            y, c, h = _lstm(leaves[0], leaves[1], leaves[2], weights, lengths)
        reserve = _Reserve((y, c, h), leaves)
        return y.detach(), c.detach(), h.detach(), reserve

    return run


@kernel("FusedLSTMGrad")
def _fused_lstm_grad(ctx: KernelContext):
    return _backward(ctx.op.name)


@kernel("FusedGRUGrad")
def _fused_gru_grad(ctx: KernelContext):
    return _backward(ctx.op.name)


def _gru_weights(kernel_: torch.Tensor, recurrent: torch.Tensor,
                 bias: torch.Tensor) -> list[torch.Tensor]:
    """Keras's ``z, r, h`` columns as torch's ``r, z, n`` GRU parameters."""
    def reorder(w: torch.Tensor) -> torch.Tensor:
        z, r, h = w.chunk(3, dim=-1)
        return torch.cat([r, z, h], dim=-1)

    return [reorder(kernel_).t(), reorder(recurrent).t(), reorder(bias[0]), reorder(bias[1])]


@kernel("FusedGRU")
def _fused_gru(ctx: KernelContext):
    reserve_output = ctx.op.outputs[2]

    def run(x: torch.Tensor, h0: torch.Tensor, kernel_: torch.Tensor, recurrent: torch.Tensor,
            bias: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[Any, ...]:
        if not reserve_output.consumers():
            with torch.no_grad():
                y, h = _gru(x, h0, _gru_weights(kernel_, recurrent, bias), lengths)
            return y, h, None
        leaves = tuple(t.detach().requires_grad_() for t in (x, h0, kernel_, recurrent, bias))
        with torch.enable_grad():
            y, h = _gru(leaves[0], leaves[1], _gru_weights(*leaves[2:]), lengths)
        return y.detach(), h.detach(), _Reserve((y, h), leaves)

    return run


def _backward(name: str) -> Any:
    """The gradient kernel of a fused RNN: ``torch.autograd.grad`` over the reserve."""

    def run(reserve: Any, *output_grads: torch.Tensor) -> tuple[Any, ...]:
        if isinstance(reserve, onednn_lstm.OneDnnReserve):
            with torch.no_grad():
                return onednn_lstm.backward(reserve, *output_grads)
        if not isinstance(reserve, _Reserve):
            raise InvalidArgumentError(
                f"'{name}': the forward fused RNN op recorded no reserve (internal error: the "
                "gradient op did not exist when the forward op ran)"
            )
        grads = torch.autograd.grad(reserve.outputs, reserve.leaves, output_grads,
                                    retain_graph=True, allow_unused=True)
        return tuple(torch.zeros_like(leaf) if g is None else g
                     for g, leaf in zip(grads, reserve.leaves))

    return run
