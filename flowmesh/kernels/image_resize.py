"""Kernels of the ``Resize*`` ops of ``flowmesh/ops/image_ops.py``.

Each method is separable: per output row (column) a few input rows (columns) and weights,
computed in float32 exactly as TensorFlow's kernels do (``CalculateResizeScale``, the legacy
and half-pixel scalers, bicubic's 1024-entry coefficient table). The engines that apply them
are in ``kernels/image_resample.py``: torch's bilinear upsampling where its coordinates are
TensorFlow's, else two ``embedding_bag`` passes over whole image rows (also for every
gradient, through the transposed taps). Taps are cached per (input size, output size, mode):
read-only arrays shared by all steps.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.image_resample import (
    Taps,
    bilinear_aligned,
    dense_taps,
    from_matrix,
    separable,
    transposed,
)

_F32 = np.float32
_TABLE_SIZE = 1024


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _source(out_size: int, scale: np.float32, half_pixel: bool, offset: float = 0.5) -> np.ndarray:
    i = np.arange(out_size, dtype=_F32)
    if half_pixel:
        return (i + _F32(0.5)) * scale - _F32(offset)
    return i * scale


@functools.lru_cache(maxsize=256)
def linear_taps(in_size: int, out_size: int, align: bool, half: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(indices [out, 2], weights [out, 2])`` of bilinear interpolation along one axis."""
    src = _source(out_size, _scale(in_size, out_size, align), half)
    floor = np.floor(src)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(src), in_size - 1).astype(np.int64)
    lerp = (src - floor).astype(_F32)
    return np.stack([lower, upper], 1), np.stack([_F32(1) - lerp, lerp], 1)


@functools.lru_cache(maxsize=256)
def nearest_taps(in_size: int, out_size: int, align: bool, half: bool) -> np.ndarray:
    """Input index of each output position (``ResizeNearestNeighbor``)."""
    src = _source(out_size, _scale(in_size, out_size, align), half, offset=0.0)
    picked = np.floor(src + _F32(0.5)) if align else np.floor(src)
    index = np.minimum(picked.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if half else index


def _coeffs(a: float) -> np.ndarray:
    table = np.zeros((_TABLE_SIZE + 1, 2), dtype=_F32)
    for i in range(_TABLE_SIZE + 1):
        x = i * 1.0 / _TABLE_SIZE
        table[i, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
        x += 1.0
        table[i, 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return table


_TABLES = {True: _coeffs(-0.5), False: _coeffs(-0.75)}


@functools.lru_cache(maxsize=256)
def cubic_taps(in_size: int, out_size: int, align: bool, half: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(indices [out, 4], weights [out, 4])`` of TensorFlow's tabulated bicubic kernel."""
    src = _source(out_size, _scale(in_size, out_size, align), half)
    table = _TABLES[half]
    index = np.zeros((out_size, 4), dtype=np.int64)
    weight = np.zeros((out_size, 4), dtype=_F32)
    for o, s in enumerate(src):
        loc = math.floor(s)
        offset = int(np.rint(_F32(s - _F32(loc)) * _F32(_TABLE_SIZE)))
        wanted = [loc - 1, loc, loc + 1, loc + 2]
        index[o] = [min(in_size - 1, max(0, v)) for v in wanted]
        weight[o] = [table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                     table[_TABLE_SIZE - offset, 1]]
        if half:
            weight[o] = np.where(index[o] == wanted, weight[o], _F32(0))
            total = weight[o].sum(dtype=_F32)
            if abs(total) >= 1000.0 * np.finfo(_F32).tiny:
                weight[o] = weight[o] * (_F32(1) / total)
    return index, weight


@functools.lru_cache(maxsize=256)
def area_matrix(in_size: int, out_size: int, align: bool) -> np.ndarray:
    """``[out, in]`` overlap lengths of each output box with each input pixel (ResizeArea)."""
    scale = float(_scale(in_size, out_size, align))
    matrix = np.zeros((out_size, in_size), dtype=np.float64)
    for o in range(out_size):
        start, end = o * scale, (o + 1) * scale
        for i in range(math.floor(start), math.ceil(end)):
            matrix[o, min(i, in_size - 1)] += min(i + 1, end) - max(i, start)
    return matrix


@functools.lru_cache(maxsize=256)
def axis_taps(method: str, in_size: int, out_size: int, align: bool, half: bool,
              grad: bool = False) -> Taps:
    """The CSR taps of ``method`` (linear, cubic, area) along one axis, transposed for a
    gradient; area weights include the ``1 / scale`` normalisation."""
    if method == "area":
        scale = float(_scale(in_size, out_size, align))
        taps = from_matrix(area_matrix(in_size, out_size, align) / scale)
    else:
        build = linear_taps if method == "linear" else cubic_taps
        taps = dense_taps(*build(in_size, out_size, align, half), in_size)
    return transposed(taps) if grad else taps


def _checked(ctx: KernelContext, images: Any, size: Any) -> tuple[int, int]:
    hw = [int(v) for v in torch.as_tensor(size).reshape(-1).tolist()]
    if images.dim() != 4 or len(hw) != 2:
        raise InvalidArgumentError(
            f"{ctx.op.type} ({ctx.op.name}): images must be 4-D [batch, height, width, channels] "
            f"and size 2 elements, got images {list(images.shape)} and size {hw}")
    if min(hw) <= 0 or images.shape[1] <= 0 or images.shape[2] <= 0:
        raise InvalidArgumentError(
            f"{ctx.op.type} ({ctx.op.name}): input {list(images.shape)} and output size {hw} "
            "must all be positive")
    return hw[0], hw[1]


def _modes(ctx: KernelContext) -> tuple[bool, bool]:
    return bool(ctx.attr("align_corners", False)), bool(ctx.attr("half_pixel_centers", False))


@kernel("ResizeBilinear")
def _resize_bilinear(ctx: KernelContext):
    align, half = _modes(ctx)

    def run(images: Any, size: Any) -> torch.Tensor:
        oh, ow = _checked(ctx, images, size)
        h, w = images.shape[1], images.shape[2]
        rows = axis_taps("linear", h, oh, align, half)
        cols = axis_taps("linear", w, ow, align, half)
        if not half:
            return bilinear_aligned(images, oh, ow, align, rows, cols)
        return separable(images.to(torch.float32), rows, cols)
    return run


@kernel("ResizeBicubic")
def _resize_bicubic(ctx: KernelContext):
    align, half = _modes(ctx)

    def run(images: Any, size: Any) -> torch.Tensor:
        oh, ow = _checked(ctx, images, size)
        h, w = images.shape[1], images.shape[2]
        return separable(images.to(torch.float32), axis_taps("cubic", h, oh, align, half),
                         axis_taps("cubic", w, ow, align, half))
    return run


@kernel("ResizeNearestNeighbor")
def _resize_nearest(ctx: KernelContext):
    align, half = _modes(ctx)

    def run(images: Any, size: Any) -> torch.Tensor:
        oh, ow = _checked(ctx, images, size)
        rows = torch.from_numpy(nearest_taps(images.shape[1], oh, align, half)).to(images.device)
        cols = torch.from_numpy(nearest_taps(images.shape[2], ow, align, half)).to(images.device)
        return images.index_select(1, rows).index_select(2, cols)
    return run


@kernel("ResizeArea")
def _resize_area(ctx: KernelContext):
    align = bool(ctx.attr("align_corners", False))

    def run(images: Any, size: Any) -> torch.Tensor:
        oh, ow = _checked(ctx, images, size)
        h, w = images.shape[1], images.shape[2]
        return separable(images.to(torch.float32), axis_taps("area", h, oh, align, False),
                         axis_taps("area", w, ow, align, False))
    return run


def _linear_grad(ctx: KernelContext, method: str):
    align, half = _modes(ctx)
    out_dtype = ctx.torch_dtype(ctx.output_dtypes[0])

    def run(grads: Any, original: Any) -> torch.Tensor:
        h, w = original.shape[1], original.shape[2]
        out = separable(grads.to(torch.float32),
                        axis_taps(method, h, grads.shape[1], align, half, grad=True),
                        axis_taps(method, w, grads.shape[2], align, half, grad=True))
        return out.to(out_dtype)
    return run


@kernel("ResizeBilinearGrad")
def _resize_bilinear_grad(ctx: KernelContext):
    return _linear_grad(ctx, "linear")


@kernel("ResizeBicubicGrad")
def _resize_bicubic_grad(ctx: KernelContext):
    return _linear_grad(ctx, "cubic")


@kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(ctx: KernelContext):
    align, half = _modes(ctx)

    def run(grads: Any, size: Any) -> torch.Tensor:
        h, w = (int(v) for v in torch.as_tensor(size).reshape(-1).tolist())
        rows = torch.from_numpy(nearest_taps(h, grads.shape[1], align, half)).to(grads.device)
        cols = torch.from_numpy(nearest_taps(w, grads.shape[2], align, half)).to(grads.device)
        n, _, gw, c = grads.shape
        by_row = grads.new_zeros((n, h, gw, c)).index_add_(1, rows, grads)
        return grads.new_zeros((n, h, w, c)).index_add_(2, cols, by_row)
    return run
