"""Kernels of ``ops/nn_morphology_ops.py``: dilation as a max over unfolded patches (cells
outside a ``SAME`` input are -inf, so they never win), its backprops as vector-Jacobian
products routed to each window's first maximum (as TensorFlow), and arg-max pooling from torch's
``max_pool2d`` indices translated to TensorFlow's flat NHWC indices."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as nnf

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.ops.nn_conv_ops import conv_geometry


def _pads(ctx: KernelContext, sizes: Any, window: Any, rates: Any) -> list[int]:
    attrs, flat = ctx.op.attrs, []
    for i in (1, 0):  # width, then height (torch's pad order)
        out, before, after = conv_geometry(int(sizes[i]), int(window[i]), attrs["strides"][i + 1],
                                           int(rates[i]), attrs["padding"])
        if out <= 0:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): the window {list(window)} "
                                       f"does not fit the input {list(sizes)}")
        flat += [before, after]
    return flat


def _dilate(ctx: KernelContext):
    strides, rates = ctx.op.attrs["strides"][1:3], ctx.op.attrs["rates"][1:3]

    def dilate(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        b, h, w, c = x.shape
        fh, fw, fc = f.shape
        if fc != c:
            raise InvalidArgumentError(f"Dilation2D ({ctx.op.name}): input depth {c} must equal "
                                       f"the filter depth {fc}")
        work = x.double() if not x.dtype.is_floating_point else x
        xn = nnf.pad(work.permute(0, 3, 1, 2), _pads(ctx, (h, w), (fh, fw), rates),
                     value=float("-inf"))
        cols = nnf.unfold(xn, (fh, fw), dilation=tuple(rates), stride=tuple(strides))
        oh, ow = [conv_geometry(n, k, s, r, ctx.op.attrs["padding"])[0]
                  for n, k, s, r in zip((h, w), (fh, fw), strides, rates)]
        patches = cols.reshape(b, c, fh * fw, oh, ow) + f.to(work.dtype).reshape(fh * fw, c).t()[
            None, :, :, None, None]
        return patches.max(dim=2).values.permute(0, 2, 3, 1).contiguous().to(x.dtype)
    return dilate


def _vjp(fn: Any, x: torch.Tensor, f: torch.Tensor, g: torch.Tensor, wrt: int) -> torch.Tensor:
    with torch.enable_grad():
        args = [x.detach().requires_grad_(wrt == 0), f.detach().requires_grad_(wrt == 1)]
        return torch.autograd.grad(fn(*args), args[wrt], g)[0]


@kernel("Dilation2D")
def _dilation2d(ctx: KernelContext):
    return _dilate(ctx)


@kernel("Dilation2DBackpropInput")
def _dilation2d_backprop_input(ctx: KernelContext):
    dilate = _dilate(ctx)
    return lambda x, f, g: _vjp(dilate, x, f, g, 0)


@kernel("Dilation2DBackpropFilter")
def _dilation2d_backprop_filter(ctx: KernelContext):
    dilate = _dilate(ctx)
    return lambda x, f, g: _vjp(dilate, x, f, g, 1)


@kernel("MaxPoolWithArgmax")
def _max_pool_with_argmax(ctx: KernelContext):
    attrs = ctx.op.attrs
    window, strides = attrs["ksize"][1:3], attrs["strides"][1:3]
    with_batch = attrs["include_batch_in_index"]
    index_dtype = torch.int32 if attrs["Targmax"].name == "int32" else torch.int64

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, h, w, c = x.shape
        pads = _pads(ctx, (h, w), window, (1, 1))
        work = x.double() if not x.dtype.is_floating_point else x
        xn = nnf.pad(work.permute(0, 3, 1, 2), pads, value=float("-inf"))
        out, idx = nnf.max_pool2d(xn, tuple(window), tuple(strides), return_indices=True)
        wp = xn.shape[3]
        yy, xx = idx // wp - pads[2], idx % wp - pads[0]
        flat = (yy * w + xx) * c + torch.arange(c, device=x.device).reshape(1, c, 1, 1)
        if with_batch:
            flat = flat + torch.arange(b, device=x.device).reshape(b, 1, 1, 1) * (h * w * c)
        return (out.permute(0, 2, 3, 1).contiguous().to(x.dtype),
                flat.permute(0, 2, 3, 1).contiguous().to(index_dtype))
    return run


@kernel("MaxPoolGradWithArgmax")
def _max_pool_grad_with_argmax(ctx: KernelContext):
    with_batch = ctx.op.attrs["include_batch_in_index"]

    def run(x: torch.Tensor, grad: torch.Tensor, argmax: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        per_image = x[0].numel() if b else 0
        index = argmax.reshape(b, -1).long()
        if not with_batch:
            index = index + torch.arange(b, device=x.device).reshape(b, 1) * per_image
        if index.numel() and (index.min() < 0 or index.max() >= x.numel()):
            raise InvalidArgumentError(f"MaxPoolGradWithArgmax ({ctx.op.name}): an argmax index is "
                                       f"outside the input of {x.numel()} elements")
        out = torch.zeros(x.numel(), dtype=grad.dtype, device=grad.device)
        out.index_add_(0, index.reshape(-1), grad.reshape(-1))
        return out.reshape(x.shape)
    return run
