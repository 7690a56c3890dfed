"""Kernels of ``flowmesh/ops/nn_conv_ops.py``: conv2d, its backprops, max/avg pooling.

torch computes in NCHW; an NHWC tensor viewed with ``permute(0, 3, 1, 2)`` *is* an NCHW
tensor in torch's ``channels_last`` memory format, so no data is copied on the way in, and
the channels_last result permuted back is a contiguous NHWC tensor. Filters go from HWIO
to torch's OIHW by a view as well.

TensorFlow's asymmetric ``SAME`` padding is applied exactly: symmetric padding is passed
to torch, otherwise the input is padded explicitly (zeros for convolution and average
pooling, -inf for max pooling) and gradients are cropped back.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch.nn.functional as nnf

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints, static_input
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.ops.nn_conv_ops import spatial_dims, static_conv_padding


# --- layout helpers ------------------------------------------------------------------------
def _nchw(x: torch.Tensor, fmt: str) -> torch.Tensor:
    return x.permute(0, 3, 1, 2) if fmt == "NHWC" else x


def _back(y: torch.Tensor, fmt: str) -> torch.Tensor:
    return y.permute(0, 2, 3, 1).contiguous() if fmt == "NHWC" else y.contiguous()


def _oihw(f: torch.Tensor, fmt: str = "NCHW") -> torch.Tensor:
    """HWIO -> OIHW in the memory format torch's convolution takes with the input's: for
    NHWC (channels-last) inputs channels-last weights (O, H, W, I in memory), else
    contiguous. One copy; a weight in the other format would be copied again inside
    torch, and a strided view sends it down a slow path."""
    if fmt == "NHWC":
        return f.permute(3, 0, 1, 2).contiguous().permute(0, 3, 1, 2)
    return f.permute(3, 2, 0, 1).contiguous()


def _weight_shape(f_out: int, f_in: int, kh: int, kw: int, dtype: torch.dtype, fmt: str) -> torch.Tensor:
    """A tensor with a filter's shape and memory format, for the filter gradient (its
    values are not read)."""
    if fmt == "NHWC":
        return torch.empty((f_out, kh, kw, f_in), dtype=dtype).permute(0, 3, 1, 2)
    return torch.zeros((), dtype=dtype).expand(f_out, f_in, kh, kw)


def _hwio(f: torch.Tensor) -> torch.Tensor:
    return f.permute(2, 3, 1, 0).contiguous()


class _Geometry:
    """Strides, dilations and a per-shape cache of TensorFlow's padding for one op."""

    def __init__(self, ctx: KernelContext, window_attr: str | None = None):
        attrs = ctx.op.attrs
        self.attrs = attrs
        self.fmt = attrs["data_format"]
        dims = spatial_dims(self.fmt)
        self.stride = [attrs["strides"][d] for d in dims]
        self.dilation = [(attrs.get("dilations") or [1] * 4)[d] for d in dims]
        self.window = [attrs[window_attr][d] for d in dims] if window_attr else None
        self.pads = functools.lru_cache(maxsize=64)(self._pads)

    def _pads(self, h: int, w: int, kh: int, kw: int) -> tuple[int, int, int, int, int, int]:
        """(out_h, out_w, top, bottom, left, right) for an input of spatial size h x w."""
        (oh, top, bottom), (ow, left, right) = static_conv_padding(self.attrs, (h, w), (kh, kw))
        if oh <= 0 or ow <= 0:
            raise InvalidArgumentError(
                f"Computed output size would be negative: [{oh}, {ow}] for input [{h}, {w}], "
                f"window [{kh}, {kw}], strides {self.stride}, dilations {self.dilation}"
            )
        return oh, ow, top, bottom, left, right

    def window_pads(self, x: torch.Tensor) -> tuple[int, int, int, int, int, int]:
        return self.pads(x.shape[2], x.shape[3], self.window[0], self.window[1])


def _symmetric(top: int, bottom: int, left: int, right: int) -> bool:
    return top == bottom and left == right


def _float_compute(dtype: torch.dtype) -> torch.dtype | None:
    """The dtype integer convolutions are computed in (exact for moderate values)."""
    return torch.float64 if not dtype.is_floating_point else None


def _check_channels(x: torch.Tensor, f: torch.Tensor, op_name: str) -> int:
    in_c, f_in = x.shape[1], f.shape[1]
    if f_in == 0 or in_c % f_in:
        raise InvalidArgumentError(
            f"{op_name}: input depth must be evenly divisible by filter depth: {in_c} vs {f_in}"
        )
    return in_c // f_in


# --- Conv2D ----------------------------------------------------------------------------------
@kernel("Conv2D")
def _conv2d(ctx: KernelContext):
    geo = _Geometry(ctx)
    fmt = geo.fmt

    def conv(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        xn, fn = _nchw(x, fmt), _oihw(f, fmt)
        groups = _check_channels(xn, fn, "Conv2D")
        _, _, top, bottom, left, right = geo.pads(xn.shape[2], xn.shape[3], fn.shape[2], fn.shape[3])
        compute = _float_compute(x.dtype)
        if compute is not None:
            xn, fn = xn.to(compute), fn.to(compute)
        if _symmetric(top, bottom, left, right):
            y = nnf.conv2d(xn, fn, None, geo.stride, (top, left), geo.dilation, groups)
        else:
            xn = nnf.pad(xn, (left, right, top, bottom))
            y = nnf.conv2d(xn, fn, None, geo.stride, 0, geo.dilation, groups)
        return _back(y if compute is None else y.to(x.dtype), fmt)

    return conv


def _sizes_getter(ctx: KernelContext, index: int, fmt: str | None):
    """Reads a 4-D size argument once when it is a constant, per step otherwise (as NCHW)."""
    static = static_input(ctx, index)

    def to_nchw(sizes: list[int]) -> list[int]:
        if fmt == "NHWC":
            return [sizes[0], sizes[3], sizes[1], sizes[2]]
        return list(sizes)

    if static is not None:
        fixed = to_nchw(as_ints(static))
        return lambda value: fixed
    return lambda value: to_nchw(as_ints(value))


@kernel("Conv2DBackpropInput")
def _conv2d_backprop_input(ctx: KernelContext):
    geo = _Geometry(ctx)
    fmt = geo.fmt
    sizes_of = _sizes_getter(ctx, 0, fmt)

    def backprop_input(sizes: Any, f: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        n, c, h, w = sizes_of(sizes)
        gn, fn = _nchw(g, fmt), _oihw(f, fmt)
        groups = c // fn.shape[1] if fn.shape[1] else 1
        oh, ow, top, bottom, left, right = geo.pads(h, w, fn.shape[2], fn.shape[3])
        if (gn.shape[2], gn.shape[3]) != (oh, ow) or gn.shape[1] != fn.shape[0] or c % max(fn.shape[1], 1):
            raise InvalidArgumentError(
                f"Conv2DBackpropInput: out_backprop shape {list(g.shape)} does not match the "
                f"convolution of input {sizes} with filter {list(f.shape)} (expected spatial "
                f"[{oh}, {ow}] and {fn.shape[0]} channels)"
            )
        eff_h = (fn.shape[2] - 1) * geo.dilation[0] + 1
        eff_w = (fn.shape[3] - 1) * geo.dilation[1] + 1
        extra = (h + top + bottom - ((oh - 1) * geo.stride[0] + eff_h),
                 w + left + right - ((ow - 1) * geo.stride[1] + eff_w))
        compute = _float_compute(g.dtype)
        if compute is not None:
            gn, fn = gn.to(compute), fn.to(compute)
        if _symmetric(top, bottom, left, right):
            dx = nnf.conv_transpose2d(gn, fn, None, geo.stride, (top, left), extra, groups, geo.dilation)
        else:
            dx = nnf.conv_transpose2d(gn, fn, None, geo.stride, 0, extra, groups, geo.dilation)
            dx = dx[:, :, top:top + h, left:left + w]
        return _back(dx if compute is None else dx.to(g.dtype), fmt)

    return backprop_input


@kernel("Conv2DBackpropFilter")
def _conv2d_backprop_filter(ctx: KernelContext):
    geo = _Geometry(ctx)
    fmt = geo.fmt
    sizes_of = _sizes_getter(ctx, 1, None)

    def backprop_filter(x: torch.Tensor, sizes: Any, g: torch.Tensor) -> torch.Tensor:
        kh, kw, f_in, f_out = sizes_of(sizes)
        xn, gn = _nchw(x, fmt), _nchw(g, fmt)
        groups = xn.shape[1] // f_in if f_in and xn.shape[1] % f_in == 0 else 0
        oh, ow, top, bottom, left, right = geo.pads(xn.shape[2], xn.shape[3], kh, kw)
        if not groups or (gn.shape[2], gn.shape[3]) != (oh, ow) or gn.shape[1] != f_out:
            raise InvalidArgumentError(
                f"Conv2DBackpropFilter: out_backprop shape {list(g.shape)} does not match the "
                f"convolution of input {list(x.shape)} with filter [{kh}, {kw}, {f_in}, {f_out}]"
            )
        compute = _float_compute(x.dtype)
        if compute is not None:
            xn, gn = xn.to(compute), gn.to(compute)
        if _symmetric(top, bottom, left, right):
            padding = [top, left]
        else:
            xn, padding = nnf.pad(xn, (left, right, top, bottom)), [0, 0]
        placeholder = _weight_shape(f_out, f_in, kh, kw, xn.dtype, fmt)
        _, df, _ = torch.ops.aten.convolution_backward(
            gn, xn, placeholder, None, geo.stride, padding, geo.dilation, False, [0, 0], groups,
            [False, True, False])
        return _hwio(df if compute is None else df.to(x.dtype))

    return backprop_filter


# --- max pooling -----------------------------------------------------------------------------
def _neg_inf(dtype: torch.dtype) -> float:
    return float("-inf") if dtype.is_floating_point else float(torch.iinfo(dtype).min)


def _pool_input(geo: _Geometry, x: torch.Tensor) -> tuple[torch.Tensor, int, int, int, int]:
    """NCHW input padded (with -inf) when the padding is asymmetric; returns pads used by torch."""
    xn = _nchw(x, geo.fmt)
    _, _, top, bottom, left, right = geo.window_pads(xn)
    if _symmetric(top, bottom, left, right) and top <= geo.window[0] // 2 and left <= geo.window[1] // 2:
        return xn, top, left, 0, 0
    padded = nnf.pad(xn, (left, right, top, bottom), value=_neg_inf(x.dtype))
    return padded, 0, 0, top, left


def _max_pool_indices(geo: _Geometry, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Any]:
    xp, ph, pw, crop_top, crop_left = _pool_input(geo, x)
    compute = xp if xp.dtype.is_floating_point else xp.to(torch.float64)
    y, idx = nnf.max_pool2d(compute, geo.window, geo.stride, (ph, pw), return_indices=True)
    return y.to(x.dtype), idx, (compute, ph, pw, crop_top, crop_left)


@kernel("MaxPool")
def _max_pool(ctx: KernelContext):
    geo = _Geometry(ctx, "ksize")

    def max_pool(x: torch.Tensor) -> torch.Tensor:
        xp, ph, pw, _, _ = _pool_input(geo, x)
        if not xp.dtype.is_floating_point:
            return _back(nnf.max_pool2d(xp.to(torch.float64), geo.window, geo.stride, (ph, pw)).to(x.dtype),
                         geo.fmt)
        return _back(nnf.max_pool2d(xp, geo.window, geo.stride, (ph, pw)), geo.fmt)

    return max_pool


@kernel("MaxPoolGrad")
def _max_pool_grad(ctx: KernelContext):
    geo = _Geometry(ctx, "ksize")

    def max_pool_grad(x: torch.Tensor, y: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        _, idx, (xp, ph, pw, top, left) = _max_pool_indices(geo, x)
        gn = _nchw(g, geo.fmt).to(xp.dtype)
        if gn.shape != idx.shape:
            raise InvalidArgumentError(
                f"MaxPoolGrad: grad shape {list(g.shape)} does not match the pooled output "
                f"shape {list(_back(idx, geo.fmt).shape)}"
            )
        dx = torch.ops.aten.max_pool2d_with_indices_backward(
            gn, xp, geo.window, geo.stride, [ph, pw], [1, 1], False, idx)
        h, w = _nchw(x, geo.fmt).shape[2:]
        dx = dx[:, :, top:top + h, left:left + w]
        return _back(dx.to(g.dtype), geo.fmt)

    return max_pool_grad


@kernel("MaxPoolGradGrad")
def _max_pool_grad_grad(ctx: KernelContext):
    geo = _Geometry(ctx, "ksize")

    def max_pool_grad_grad(x: torch.Tensor, y: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        _, idx, (xp, ph, pw, top, left) = _max_pool_indices(geo, x)
        gn = _nchw(g, geo.fmt)
        if top or left or gn.shape[2:] != xp.shape[2:]:
            gn = nnf.pad(gn, (left, xp.shape[3] - gn.shape[3] - left, top, xp.shape[2] - gn.shape[2] - top))
        flat = gn.reshape(gn.shape[0], gn.shape[1], -1)
        out = flat.gather(2, idx.reshape(idx.shape[0], idx.shape[1], -1)).reshape(idx.shape)
        return _back(out, geo.fmt)

    return max_pool_grad_grad


# --- average pooling -------------------------------------------------------------------------
def _counts(size: int, k: int, stride: int, out: int, before: int) -> torch.Tensor:
    starts = torch.arange(out) * stride - before
    return (torch.clamp(starts + k, max=size) - torch.clamp(starts, min=0)).to(torch.float64)


class _AvgPoolPlan:
    """How many real (unpadded) inputs each output window averages, per input shape."""

    def __init__(self, geo: _Geometry):
        self.geo = geo
        self.divisors = functools.lru_cache(maxsize=32)(self._divisors)

    def _divisors(self, h: int, w: int, dtype: torch.dtype) -> torch.Tensor:
        oh, ow, top, _, left, _ = self.geo.pads(h, w, *self.geo.window)
        rows = _counts(h, self.geo.window[0], self.geo.stride[0], oh, top)
        cols = _counts(w, self.geo.window[1], self.geo.stride[1], ow, left)
        return (rows[:, None] * cols[None, :]).to(dtype)


@kernel("AvgPool")
def _avg_pool(ctx: KernelContext):
    geo = _Geometry(ctx, "ksize")
    plan = _AvgPoolPlan(geo)

    def avg_pool(x: torch.Tensor) -> torch.Tensor:
        xn = _nchw(x, geo.fmt)
        _, _, top, bottom, left, right = geo.window_pads(xn)
        if _symmetric(top, bottom, left, right) and top <= geo.window[0] // 2 and left <= geo.window[1] // 2:
            y = nnf.avg_pool2d(xn, geo.window, geo.stride, (top, left), False, False)
            return _back(y, geo.fmt)
        sums = nnf.avg_pool2d(nnf.pad(xn, (left, right, top, bottom)), geo.window, geo.stride, 0,
                            False, True, 1)
        return _back(sums / plan.divisors(xn.shape[2], xn.shape[3], x.dtype), geo.fmt)

    return avg_pool


@kernel("AvgPoolGrad")
def _avg_pool_grad(ctx: KernelContext):
    geo = _Geometry(ctx, "ksize")
    plan = _AvgPoolPlan(geo)
    sizes_of = _sizes_getter(ctx, 0, geo.fmt)

    def avg_pool_grad(sizes: Any, g: torch.Tensor) -> torch.Tensor:
        n, c, h, w = sizes_of(sizes)
        gn = _nchw(g, geo.fmt)
        oh, ow, top, bottom, left, right = geo.pads(h, w, *geo.window)
        if tuple(gn.shape) != (n, c, oh, ow):
            raise InvalidArgumentError(
                f"AvgPoolGrad: grad shape {list(g.shape)} does not match the pooled output of "
                f"an input of shape {as_ints(sizes) if not isinstance(sizes, list) else sizes}"
            )
        scaled = gn / plan.divisors(h, w, g.dtype)
        template = torch.empty((n, c, h + top + bottom, w + left + right), dtype=g.dtype)
        dx = torch.ops.aten.avg_pool2d_backward(scaled, template, geo.window, geo.stride, [0, 0],
                                                False, True, 1)
        return _back(dx[:, :, top:top + h, left:left + w], geo.fmt)

    return avg_pool_grad
