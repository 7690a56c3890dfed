"""Kernels of ``flowmesh/ops/nn_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.registry import KernelContext, kernel, simple_kernel

simple_kernel("Relu", torch.relu)
# One fused pass (``g if y > 0 else 0``); torch.where + a comparison is ~3x slower.
simple_kernel("ReluGrad", lambda g, y: torch.ops.aten.threshold_backward(g, y, 0))
simple_kernel("Softmax", lambda x: torch.softmax(x, -1))
simple_kernel("LogSoftmax", lambda x: torch.log_softmax(x, -1))


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
    log_probs = torch.log_softmax(logits, -1)
    loss = -(labels * log_probs).sum(-1)
    return loss, torch.exp(log_probs) - labels


def _out_of_range(idx: Any, classes: int) -> bool:
    """Whether any label is outside ``[0, classes)``: one min/max pass, one sync."""
    lo, hi = torch.aminmax(idx)
    return int(lo) < 0 or int(hi) >= classes


def _sparse_xent(logits: Any, labels: Any) -> tuple[Any, Any]:
    classes = logits.shape[-1]
    idx = labels.long()
    if idx.numel() and _out_of_range(idx, classes):
        bad = idx[(idx < 0) | (idx >= classes)][0]
        raise InvalidArgumentError(
            f"Received a label value of {int(bad)} which is outside the valid range of "
            f"[0, {classes}).  Label values: {' '.join(str(int(v)) for v in idx.reshape(-1)[:32])}"
        )
    log_probs = torch.log_softmax(logits, -1)
    loss = -log_probs.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
    backprop = torch.exp(log_probs)
    backprop.scatter_add_(-1, idx.unsqueeze(-1), torch.full_like(loss, -1.0).unsqueeze(-1))
    return loss, backprop


simple_kernel("SoftmaxCrossEntropyWithLogits", _xent)
simple_kernel("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent)
