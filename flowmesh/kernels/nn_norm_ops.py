"""Kernels of ``flowmesh/ops/nn_norm_ops.py``: fused batch norm (forward and backward), L2Loss.

Batch norm runs on torch's own kernels, ``native_batch_norm`` forward and
``native_batch_norm_backward`` backward, each one call over a channel-first view of the
input (channels-last layouts stay where they are). Statistics of float16/bfloat16 inputs
are computed in float32, as TensorFlow does.
"""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.ops.nn_norm_ops import bn_channel_axis, bn_reduce_axes

_EMPTY = torch.empty(0)


class _Layout:
    """Reduction axes, channel broadcasting and torch's channel-first view of one format.

    torch's batch norm kernels take the channel axis at 1. A channels-last tensor viewed
    with ``permute(0, rank - 1, 1, ..., rank - 2)`` *is* such a tensor, in torch's
    ``channels_last`` memory format, so no data moves on the way in or out.
    """

    def __init__(self, data_format: str, rank: int):
        self.rank = rank
        self.axes = tuple(bn_reduce_axes(data_format, rank))
        self.shape = [1] * rank
        self.channel = bn_channel_axis(data_format) % rank
        self.shape[self.channel] = -1
        self.last = self.channel == rank - 1
        self.to_first = (0, rank - 1) + tuple(range(1, rank - 1))
        self.to_last = (0,) + tuple(range(2, rank)) + (1,)

    def b(self, v: torch.Tensor) -> torch.Tensor:
        """A per-channel vector shaped to broadcast against the input."""
        return v if self.last else v.reshape(self.shape)

    def first(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` as a channel-first view (no copy)."""
        return x.permute(self.to_first) if self.last else x

    def back(self, y: torch.Tensor) -> torch.Tensor:
        """A channel-first result in this format, contiguous."""
        return (y.permute(self.to_last) if self.last else y).contiguous()


def _compute(x: torch.Tensor) -> torch.Tensor:
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def _check_vectors(x: torch.Tensor, layout: _Layout, **vectors: torch.Tensor) -> None:
    channels = x.shape[layout.channel]
    for what, v in vectors.items():
        if v.dim() != 1 or v.shape[0] != channels:
            raise InvalidArgumentError(
                f"FusedBatchNorm: {what} must be a vector of {channels} elements (the channel "
                f"count of x with shape {list(x.shape)}), got shape {list(v.shape)}")


def _per_channel(x: torch.Tensor, layout: _Layout) -> int:
    """How many elements each channel's statistics are computed over."""
    return x.numel() // max(x.shape[layout.channel], 1)


def _reserve_3(scale: torch.Tensor) -> torch.Tensor:
    """TensorFlow's CPU kernel returns a scalar zero as the third reserve space."""
    return torch.zeros((), dtype=scale.dtype)


def _train_stats(x: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor, layout: _Layout,
                 eps: float) -> tuple[torch.Tensor, ...]:
    """``y``, the batch mean (twice, as two tensors) and the unbiased and biased batch
    variances, from one torch kernel.

    ``torch.native_batch_norm`` writes the batch mean and the Bessel-corrected variance
    into the "running" buffers when their momentum is 1; one pass over ``x`` computes the
    statistics and one more the output. Fewer than two elements per channel go the
    generic way (TensorFlow's unbiased variance is then the biased one).
    """
    n = _per_channel(x, layout)
    if n < 2:
        xc = _compute(x)
        var, mu = torch.var_mean(xc, dim=layout.axes, correction=0)
        a = scale * torch.rsqrt(var + eps)
        y = torch.addcmul(layout.b(offset - mu * a), xc, layout.b(a)).to(x.dtype)
        return y, mu, var.clone(), mu.clone(), var
    channels = scale.shape[0]
    mean = torch.zeros(channels, dtype=scale.dtype)
    unbiased = torch.zeros(channels, dtype=scale.dtype)
    y, saved_mean, _ = torch.native_batch_norm(layout.first(x), scale, offset, mean, unbiased, True, 1.0, eps)
    return layout.back(y), mean, unbiased, saved_mean, unbiased * ((n - 1) / n)


@kernel("FusedBatchNormV3")
def _fused_batch_norm(ctx: KernelContext):
    eps = float(ctx.attr("epsilon"))
    fmt = ctx.attr("data_format")
    training = bool(ctx.attr("is_training"))
    factor = float(ctx.attr("exponential_avg_factor", 1.0))
    layout = _Layout(fmt, len(fmt))

    def forward(x: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor, mean: torch.Tensor,
                variance: torch.Tensor) -> tuple[Any, ...]:
        if x.dim() != len(fmt):
            raise InvalidArgumentError(f"FusedBatchNorm: x must be {len(fmt)}-D for {fmt}, got {list(x.shape)}")
        _check_vectors(x, layout, scale=scale, offset=offset)
        if not training:
            _check_vectors(x, layout, mean=mean, variance=variance)
            y = torch.native_batch_norm(layout.first(x), scale, offset, mean, variance, False, 0.0, eps)[0]
            return layout.back(y), mean, variance, mean, variance, _reserve_3(scale)
        y, mu, unbiased, saved_mean, biased = _train_stats(x, scale, offset, layout, eps)
        if factor == 1.0:
            return y, mu, unbiased, saved_mean, biased, _reserve_3(scale)
        _check_vectors(x, layout, mean=mean, variance=variance)
        keep = 1.0 - factor
        out_mean = torch.add(mu * factor, mean, alpha=keep)
        out_var = torch.add(unbiased * factor, variance, alpha=keep)
        return y, out_mean, out_var, saved_mean, biased, _reserve_3(scale)

    return forward


@kernel("FusedBatchNormGradV3")
def _fused_batch_norm_grad(ctx: KernelContext):
    """TensorFlow's gradient from the saved statistics: ``reserve_space_1`` is the batch
    mean and ``reserve_space_2`` the biased batch variance (training), or the given mean
    and variance (inference). One ``native_batch_norm_backward`` call computes all three
    gradients in two passes over ``x`` and ``dy``."""
    eps = float(ctx.attr("epsilon"))
    fmt = ctx.attr("data_format")
    training = bool(ctx.attr("is_training"))
    layout = _Layout(fmt, len(fmt))
    everything = [True, True, True]

    def backward(dy: torch.Tensor, x: torch.Tensor, scale: torch.Tensor, mean: torch.Tensor,
                 var: torch.Tensor, _reserve: Any) -> tuple[Any, ...]:
        if x.dim() != len(fmt) or dy.shape != x.shape:
            raise InvalidArgumentError(
                f"FusedBatchNormGrad: x and y_backprop must be {len(fmt)}-D tensors of one shape "
                f"for {fmt}, got {list(x.shape)} and {list(dy.shape)}")
        _check_vectors(x, layout, scale=scale, reserve_space_1=mean, reserve_space_2=var)
        xt, dyt = layout.first(x), layout.first(dy)
        if training:
            invstd = torch.rsqrt(var + eps)
            dx, d_scale, d_offset = torch.ops.aten.native_batch_norm_backward(
                dyt, xt, scale, None, None, mean, invstd, True, eps, everything)
        else:
            dx, d_scale, d_offset = torch.ops.aten.native_batch_norm_backward(
                dyt, xt, scale, mean, var, None, None, False, eps, everything)
        return layout.back(dx), d_scale, d_offset, _EMPTY, _EMPTY

    return backward


simple_kernel("L2Loss", lambda x: torch.square(x).sum() * 0.5)


def _channel_window_sum(v: torch.Tensor, radius: int) -> torch.Tensor:
    """``out[..., d] = sum(v[..., d - radius : d + radius + 1])`` (zero beyond the edges)."""
    if radius == 0:
        return v
    padded = torch.nn.functional.pad(v, (radius, radius))
    return padded.unfold(-1, 2 * radius + 1, 1).sum(-1)


class _LRN:
    def __init__(self, ctx: KernelContext):
        self.radius = int(ctx.attr("depth_radius"))
        self.bias, self.alpha, self.beta = (float(ctx.attr(k)) for k in ("bias", "alpha", "beta"))

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise InvalidArgumentError(f"LRN input must be 4-dimensional, got shape {list(x.shape)}")
        return self.bias + self.alpha * _channel_window_sum(x * x, self.radius)


@kernel("LRN")
def _lrn(ctx: KernelContext):
    lrn = _LRN(ctx)

    def forward(x: torch.Tensor) -> torch.Tensor:
        xc = _compute(x)
        return (xc * torch.pow(lrn.scale(xc), -lrn.beta)).to(x.dtype)

    return forward


@kernel("LRNGrad")
def _lrn_grad(ctx: KernelContext):
    lrn = _LRN(ctx)

    def backward(g: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        gc, xc = _compute(g), _compute(x)
        s = lrn.scale(xc)
        inner = _channel_window_sum(gc * xc * torch.pow(s, -lrn.beta - 1.0), lrn.radius)
        dx = gc * torch.pow(s, -lrn.beta) - (2.0 * lrn.alpha * lrn.beta) * xc * inner
        return dx.to(x.dtype)

    return backward
