"""Kernels of ``flowmesh/ops/reduction_ops.py``: reductions, arg-max, segments, matmul."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from flowmesh.kernels.array_ops import as_ints, static_input
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _axes(value: Any, rank: int) -> tuple[int, ...]:
    return tuple(sorted({a % rank for a in as_ints(value)})) if rank else ()


def _reduction(reduce: Callable[[Any, tuple[int, ...], bool], Any]):
    """Builds a factory for a reduction ``reduce(x, axes, keepdim)`` over static or runtime axes."""

    def factory(ctx: KernelContext):
        keep = bool(ctx.attr("keep_dims"))
        static = static_input(ctx, 1)
        rank = ctx.op.inputs[0].shape.rank
        if static is not None and rank is not None:
            axes = _axes(static, rank)
            if not axes:
                return lambda x, a: x
            return lambda x, a: reduce(x, axes, keep)

        def run(x: Any, a: Any) -> Any:
            axes = _axes(a, x.dim())
            return reduce(x, axes, keep) if axes else x

        return run

    return factory


def _mean(x: Any, axes: tuple[int, ...], keep: bool) -> Any:
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return torch.mean(x, axes, keep)
    count = 1
    for a in axes:
        count *= x.shape[a]
    return torch.div(torch.sum(x, axes, keep, dtype=x.dtype), max(count, 1), rounding_mode="trunc")


def _one_axis_at_a_time(fn: Callable[..., Any]) -> Callable[[Any, tuple[int, ...], bool], Any]:
    def reduce(x: Any, axes: tuple[int, ...], keep: bool) -> Any:
        for a in sorted(axes, reverse=True):
            x = fn(x, a, keepdim=keep)
        return x

    return reduce


kernel("Sum")(_reduction(lambda x, axes, keep: torch.sum(x, axes, keep, dtype=x.dtype)))
kernel("Mean")(_reduction(_mean))
def _extremum(fn: Callable[..., Any], lowest: bool) -> Callable[[Any, tuple[int, ...], bool], Any]:
    """Max/Min; over no elements TensorFlow gives the identity (-inf / the lowest integer for
    Max, +inf / the highest for Min) where torch raises."""
    def reduce(x: Any, axes: tuple[int, ...], keep: bool) -> Any:
        if x.numel() and all(x.shape[a] for a in axes):
            return fn(x, axes, keep)
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        if x.dtype.is_floating_point:
            value: Any = -math.inf if lowest else math.inf
        elif x.dtype == torch.bool:
            value = not lowest
        else:
            info = torch.iinfo(x.dtype)
            value = info.min if lowest else info.max
        return torch.full(shape, value, dtype=x.dtype, device=x.device)

    return reduce


kernel("Max")(_reduction(_extremum(lambda x, axes, keep: torch.amax(x, axes, keep), lowest=True)))
kernel("Min")(_reduction(_extremum(lambda x, axes, keep: torch.amin(x, axes, keep), lowest=False)))
kernel("Prod")(_reduction(_one_axis_at_a_time(lambda x, a, keepdim: torch.prod(x, a, keepdim, dtype=x.dtype))))
kernel("Any")(_reduction(_one_axis_at_a_time(torch.any)))
kernel("All")(_reduction(_one_axis_at_a_time(torch.all)))


def _arg(fn: Callable[..., Any]):
    def factory(ctx: KernelContext):
        dtype = torch_dtype(ctx.attr("output_type"))

        def run(x: Any, axis: Any) -> Any:
            if x.numel() == 0:
                from flowmesh.errors import InvalidArgumentError

                raise InvalidArgumentError("Reduction axis has size 0 in ArgMax/ArgMin")
            return fn(x, int(axis)).to(dtype)

        return run

    return factory


kernel("ArgMax")(_arg(torch.argmax))
kernel("ArgMin")(_arg(torch.argmin))


def _cumulative(fn: Callable[..., Any], identity: int):
    def factory(ctx: KernelContext):
        exclusive, reverse = bool(ctx.attr("exclusive")), bool(ctx.attr("reverse"))

        def run(x: Any, axis: Any) -> Any:
            dim = int(axis) % x.dim()
            if reverse:
                x = torch.flip(x, (dim,))
            out = fn(x, dim, dtype=x.dtype)  # torch would widen int32 to int64
            if exclusive:
                pad = torch.full_like(out.narrow(dim, 0, 1), identity)
                out = torch.cat([pad, out.narrow(dim, 0, out.shape[dim] - 1)], dim)
            return torch.flip(out, (dim,)) if reverse else out

        return run

    return factory


kernel("Cumsum")(_cumulative(torch.cumsum, 0))
kernel("Cumprod")(_cumulative(torch.cumprod, 1))


@kernel("BroadcastTo")
def _broadcast_to(ctx: KernelContext):
    static = static_input(ctx, 1)
    if static is not None:
        shape = tuple(int(d) for d in static)
        return lambda x, s: torch.broadcast_to(x, shape)
    return lambda x, s: torch.broadcast_to(x, tuple(as_ints(s)))
