"""Kernels of ``flowmesh/ops/nn_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel

simple_kernel("Relu", torch.relu)
# One fused pass (``g if y > 0 else 0``); torch.where + a comparison is ~3x slower.
simple_kernel("ReluGrad", lambda g, y: torch.ops.aten.threshold_backward(g, y, 0))
#: torch's last-axis (log-)softmax is slow for fewer classes than one AVX-512 vector: 128x10
#: took 17 us (16 classes: 2.7 us); over axis 0 of the transposed view it takes ~6 us.
NARROW_SOFTMAX = 16


def _softmax_of(fn: Any) -> Any:
    def run(x: Any) -> Any:
        classes = x.shape[-1] if x.dim() else 0
        if x.dim() >= 2 and 1 < classes < NARROW_SOFTMAX and x.numel() >= 64 * classes:
            # Computed column-major; copied back to row-major (1 us for 128x10).
            return fn(x.reshape(-1, classes).mT, 0).mT.contiguous().view(x.shape)
        return fn(x, -1)

    return run


_softmax = _softmax_of(torch.softmax)
_log_softmax = _softmax_of(torch.log_softmax)
simple_kernel("Softmax", _softmax)
simple_kernel("LogSoftmax", _log_softmax)


def _check_bias(x: Any, b: Any, channel: int) -> None:
    if b.dim() != 1 or x.dim() < 2 or b.shape[0] != x.shape[channel]:
        raise InvalidArgumentError(
            f"Must provide as many biases as the channel dimension of the input tensor: bias "
            f"shape {list(b.shape)} vs value shape {list(x.shape)} (channel axis {channel})")


@kernel("BiasAdd")
def _bias_add(ctx: KernelContext):
    if ctx.attr("data_format") == "NHWC":
        def nhwc(x: Any, b: Any) -> Any:
            _check_bias(x, b, -1)
            return torch.add(x, b)

        return nhwc

    def nchw(x: Any, b: Any) -> Any:
        _check_bias(x, b, 1)
        return x + b.reshape((1, -1) + (1,) * (x.dim() - 2))

    return nchw


@kernel("BiasAddGrad")
def _bias_add_grad(ctx: KernelContext):
    if ctx.attr("data_format") == "NHWC":
        return lambda g: g.sum(tuple(range(g.dim() - 1)))
    return lambda g: g.sum((0,) + tuple(range(2, g.dim())))


def _xent(logits: Any, labels: Any) -> tuple[Any, Any]:
    log_probs = _log_softmax(logits)
    loss = -(labels * log_probs).sum(-1)
    return loss, torch.exp(log_probs) - labels


def _label_error(idx: Any, classes: int) -> InvalidArgumentError:
    bad = idx[(idx < 0) | (idx >= classes)][0]
    return InvalidArgumentError(
        f"Received a label value of {int(bad)} which is outside the valid range of "
        f"[0, {classes}).  Label values: {' '.join(str(int(v)) for v in idx.reshape(-1)[:32])}"
    )


def _sparse_xent(logits: Any, labels: Any) -> tuple[Any, Any]:
    classes = logits.shape[-1]
    idx = labels.long()
    column = idx.unsqueeze(-1)
    if idx.device.type != "cpu":  # the gather below does not check indices off the CPU
        lo, hi = torch.aminmax(idx) if idx.numel() else (0, 0)
        if int(lo) < 0 or int(hi) >= classes:
            raise _label_error(idx, classes)
    log_probs = _log_softmax(logits)
    try:  # on the CPU the gather checks every label: no separate min/max pass and sync
        picked = log_probs.gather(-1, column)
    except (RuntimeError, IndexError):
        raise _label_error(idx, classes) from None
    loss = picked.squeeze(-1).neg_()
    backprop = log_probs.exp_()  # in place: log_probs is this kernel's own (gather copied)
    backprop.scatter_(-1, column, -1.0, reduce="add")
    return loss, backprop


simple_kernel("SoftmaxCrossEntropyWithLogits", _xent)
simple_kernel("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent)
