"""Kernels of ``ops/nn_conv3d_ops.py`` and ``ops/nn_pool3d_ops.py``: torch's 3-D convolution
and pooling in NCDHW, TensorFlow's asymmetric ``SAME`` padding applied explicitly (zeros, or
-inf for max pooling; average pooling divides by the covered cells only). The backprop kernels
are vector-Jacobian products of the forward function (torch autograd)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as nnf

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.ops.nn_conv3d_ops import spatial3
from flowmesh.ops.nn_conv_ops import conv_geometry

_LOW_PRECISION = (torch.float16, torch.bfloat16)


class _Geo:
    """Strides, dilations, window and layout of one 3-D op."""

    def __init__(self, ctx: KernelContext):
        attrs = ctx.op.attrs
        self.name, self.fmt, self.padding = ctx.op.name, attrs["data_format"], attrs["padding"]
        dims = spatial3(self.fmt)
        self.stride = [attrs["strides"][d] for d in dims]
        self.dilation = [(attrs.get("dilations") or [1] * 5)[d] for d in dims]
        self.window = [attrs["ksize"][d] for d in dims] if "ksize" in attrs else None

    def ncdhw(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 4, 1, 2, 3) if self.fmt == "NDHWC" else x

    def back(self, y: torch.Tensor) -> torch.Tensor:
        return (y.permute(0, 2, 3, 4, 1) if self.fmt == "NDHWC" else y).contiguous()

    def pad(self, xn: torch.Tensor, window: list[int], value: float = 0.0) -> torch.Tensor:
        flat: list[int] = []
        for size, k, s, d in reversed(list(zip(xn.shape[2:], window, self.stride, self.dilation))):
            out, before, after = conv_geometry(size, k, s, d, self.padding)
            if out <= 0:
                raise InvalidArgumentError(f"{self.name}: computed output size would be {out} for "
                                           f"input sizes {list(xn.shape[2:])} (NCDHW) and window "
                                           f"{window}")
            flat += [before, after]
        return nnf.pad(xn, flat, value=value) if any(flat) else xn


def _compute(fn: Callable[..., torch.Tensor], *tensors: torch.Tensor) -> torch.Tensor:
    dtype = tensors[0].dtype
    if dtype in _LOW_PRECISION:
        return fn(*(t.float() for t in tensors)).to(dtype)
    return fn(*tensors)


def _conv_fn(geo: _Geo) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def conv(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        xn, fn = geo.ncdhw(x), f.permute(4, 3, 0, 1, 2).contiguous()
        if xn.shape[1] != fn.shape[1]:
            raise InvalidArgumentError(f"{geo.name}: input depth {xn.shape[1]} must equal the "
                                       f"filter's in_channels {fn.shape[1]}")
        y = nnf.conv3d(geo.pad(xn, list(fn.shape[2:])), fn, None, geo.stride, 0, geo.dilation)
        return geo.back(y)
    return conv


def _vjp(fn: Callable[..., torch.Tensor], args: list[torch.Tensor], wrt: int,
         grad: torch.Tensor) -> torch.Tensor:
    with torch.enable_grad():
        args = [a.detach().requires_grad_(i == wrt) for i, a in enumerate(args)]
        out = fn(*args)
        return torch.autograd.grad(out, args[wrt], grad.to(out.dtype))[0]


def _zeros(sizes: Any, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros(as_ints(sizes), dtype=like.dtype, device=like.device)


@kernel("Conv3D")
def _conv3d(ctx: KernelContext):
    conv = _conv_fn(_Geo(ctx))
    return lambda x, f: _compute(conv, x, f)


@kernel("Conv3DBackpropInputV2")
def _conv3d_backprop_input(ctx: KernelContext):
    conv = _conv_fn(_Geo(ctx))

    def run(sizes: Any, f: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return _compute(lambda f32, g32: _vjp(conv, [_zeros(sizes, f32), f32], 0, g32), f, g)
    return run


@kernel("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter(ctx: KernelContext):
    conv = _conv_fn(_Geo(ctx))

    def run(x: torch.Tensor, sizes: Any, g: torch.Tensor) -> torch.Tensor:
        return _compute(lambda x32, g32: _vjp(conv, [x32, _zeros(sizes, x32)], 1, g32), x, g)
    return run


def _max_fn(geo: _Geo) -> Callable[[torch.Tensor], torch.Tensor]:
    def pool(x: torch.Tensor) -> torch.Tensor:
        xn = geo.pad(geo.ncdhw(x), geo.window, float("-inf"))
        return geo.back(nnf.max_pool3d(xn, geo.window, geo.stride))
    return pool


def _avg_fn(geo: _Geo) -> Callable[[torch.Tensor], torch.Tensor]:
    def pool(x: torch.Tensor) -> torch.Tensor:
        xn = geo.ncdhw(x)
        total = nnf.avg_pool3d(geo.pad(xn, geo.window), geo.window, geo.stride)
        if geo.padding == "VALID":
            return geo.back(total)
        ones = torch.ones((1, 1) + tuple(xn.shape[2:]), dtype=xn.dtype, device=xn.device)
        return geo.back(total / nnf.avg_pool3d(geo.pad(ones, geo.window), geo.window, geo.stride))
    return pool


@kernel("MaxPool3D")
def _max_pool3d(ctx: KernelContext):
    pool = _max_fn(_Geo(ctx))
    return lambda x: _compute(pool, x)


@kernel("AvgPool3D")
def _avg_pool3d(ctx: KernelContext):
    pool = _avg_fn(_Geo(ctx))
    return lambda x: _compute(pool, x)


@kernel("MaxPool3DGrad")
def _max_pool3d_grad(ctx: KernelContext):
    pool = _max_fn(_Geo(ctx))
    return lambda x, _y, g: _compute(lambda x32, g32: _vjp(pool, [x32], 0, g32), x, g)


@kernel("AvgPool3DGrad")
def _avg_pool3d_grad(ctx: KernelContext):
    pool = _avg_fn(_Geo(ctx))
    return lambda sizes, g: _compute(lambda g32: _vjp(pool, [_zeros(sizes, g32)], 0, g32), g)
