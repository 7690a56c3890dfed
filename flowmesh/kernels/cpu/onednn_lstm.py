"""The training path of ``FusedLSTM`` on oneDNN's LSTM primitives, called directly.

torch's ``nn.LSTM`` on CPU runs oneDNN's LSTM (``aten::mkldnn_rnn_layer``, forward with a
workspace) and, under autograd, ``aten::mkldnn_rnn_layer_backward``. Calling the two ops
ourselves gives the same numbers bit for bit and skips what autograd adds around them:
recording the graph of the forward pass (the gate reordering included), the engine's
backward pass over it, and the copies of the reordered weights' gradients. The weights are
packed at every call into torch's layout (``i, f, g, o`` rows: one column gather and two
copies) and the gradients unpacked with one row gather. The packed weights are not cached
across calls: training changes them every step, and a cache keyed on torch's version
counter would miss writes made through NumPy views of a variable.

Used for float32 CPU inputs without ``sequence_length`` (packed sequences take torch's
autograd path) when oneDNN is available; ``FLOWMESH_ONEDNN_LSTM=0`` turns it off.
"""

from __future__ import annotations

from typing import Any

import torch

_LSTM_MODE = 2  # ideep::rnn_kind::LSTM
_PERMUTATIONS: dict[tuple[int, str], torch.Tensor | None] = {}


def usable(x: torch.Tensor, c0: torch.Tensor, lengths: torch.Tensor | None) -> bool:
    """Whether the direct oneDNN path runs this call (else torch's autograd path)."""
    return (lengths is None and x.dtype == torch.float32 and x.device.type == "cpu"
            and x.shape[0] > 0 and x.shape[1] > 0 and c0.shape[-1] > 0
            and torch.backends.mkldnn.is_available() and torch._C._get_mkldnn_enabled())


def _permutation(units: int, gate_order: str) -> torch.Tensor | None:
    """Rows of torch's ``i, f, g, o`` gate blocks in TensorFlow's ``i, j, f, o`` layout
    (None for Keras's ``i, f, c, o``, which is torch's). The permutation is its own inverse."""
    key = (units, gate_order)
    if key not in _PERMUTATIONS:
        if gate_order == "ifco":
            _PERMUTATIONS[key] = None
        else:
            blocks = [torch.arange(k * units, (k + 1) * units) for k in (0, 2, 1, 3)]
            _PERMUTATIONS[key] = torch.cat(blocks)
    return _PERMUTATIONS[key]


class OneDnnReserve:
    """What ``FusedLSTMGrad`` needs from a forward pass run by :func:`forward`."""

    __slots__ = ("x", "weights", "hx", "cx", "y", "hy", "cy", "workspace", "permutation", "depth")

    def __init__(self, **values: Any):
        for name, value in values.items():
            setattr(self, name, value)


def _pack(kernel_: torch.Tensor, bias: torch.Tensor, depth: int, forget_bias: float,
          permutation: torch.Tensor | None) -> list[torch.Tensor]:
    """``[w_ih [4H, D], w_hh [4H, H], b_ih [4H], b_hh [4H]]`` in torch's gate order."""
    units = bias.shape[0] // 4
    if permutation is None:
        rows, b_ih = kernel_.t(), bias.clone()
    else:  # gathering whole columns, then transposing, is ~3x faster than gathering rows of .t()
        rows, b_ih = kernel_.index_select(1, permutation).t(), bias.index_select(0, permutation)
    w_ih, w_hh = rows[:, :depth].contiguous(), rows[:, depth:].contiguous()
    if forget_bias:
        b_ih[units:2 * units] += forget_bias
    return [w_ih, w_hh, b_ih, torch.zeros_like(b_ih)]


def forward(x: torch.Tensor, c0: torch.Tensor, h0: torch.Tensor, kernel_: torch.Tensor,
            bias: torch.Tensor, forget_bias: float, gate_order: str,
            train: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, OneDnnReserve | None]:
    """``(y [T, B, H], c, h, reserve)`` of an LSTM over ``x [T, B, D]``; the reserve (the
    workspace of oneDNN's training forward pass) only when ``train``."""
    units = c0.shape[-1]
    depth = x.shape[-1]
    permutation = _permutation(units, gate_order)
    weights = _pack(kernel_, bias, depth, forget_bias, permutation)
    x = x.contiguous()
    hx, cx = h0.unsqueeze(0).contiguous(), c0.unsqueeze(0).contiguous()
    y, hy, cy, workspace = torch.ops.aten.mkldnn_rnn_layer(
        x, *weights, hx, cx, False, [], _LSTM_MODE, units, 1, True, False, False, train)
    reserve = OneDnnReserve(x=x, weights=weights, hx=hx, cx=cx, y=y, hy=hy, cy=cy, workspace=workspace,
                            permutation=permutation, depth=depth) if train else None
    return y, cy[0], hy[0], reserve


def backward(reserve: OneDnnReserve, dy: torch.Tensor, dc: torch.Tensor,
             dh: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``(dx, dc0, dh0, dkernel, dbias)`` in TensorFlow's layout."""
    r = reserve
    dx, dw_ih, dw_hh, db_ih, _, dhx, dcx = torch.ops.aten.mkldnn_rnn_layer_backward(
        r.x, *r.weights, r.hx, r.cx, r.y, r.hy, r.cy, dy.contiguous(), dh.unsqueeze(0).contiguous(),
        dc.unsqueeze(0).contiguous(), False, _LSTM_MODE, r.hy.shape[-1], 1, True, True, False, [], False,
        r.workspace)
    rows = torch.cat([dw_ih, dw_hh], dim=1)  # [4H, D + H] in torch's gate order
    if r.permutation is None:
        return dx, dcx[0], dhx[0], rows.t().contiguous(), db_ih
    return dx, dcx[0], dhx[0], rows.index_select(0, r.permutation).t().contiguous(), \
        db_ih.index_select(0, r.permutation)
