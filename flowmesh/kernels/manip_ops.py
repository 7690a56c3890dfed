"""Kernels of ``flowmesh/ops/manip_ops.py``.

Mirror padding and its gradient use one index vector per dimension (output position ->
input position), so every rank and both modes share one code path: padding gathers
with ``index_select``, the gradient scatters back with ``index_add``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints, static_input
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


# --- Slice -----------------------------------------------------------------------------------
def _slice(x: Any, begin: Any, size: Any) -> Any:
    b, s = as_ints(begin), as_ints(size)
    if len(b) != x.dim() or len(s) != x.dim():
        raise InvalidArgumentError(f"Expected begin and size to have {x.dim()} elements (input "
                                   f"shape {list(x.shape)}), got begin {b} and size {s}")
    index = []
    for i, (start, length, dim) in enumerate(zip(b, s, x.shape)):
        length = dim - start if length == -1 else length
        if not (0 <= start <= dim and 0 <= length and start + length <= dim):
            raise InvalidArgumentError(f"Expected begin[{i}]={start} and size[{i}]={s[i]} to satisfy "
                                       f"0 <= begin <= begin + size <= {dim}")
        index.append(slice(start, start + length))
    return x[tuple(index)]


@kernel("Slice")
def _slice_kernel(ctx: KernelContext):
    return _slice


# --- Pad / MirrorPad -------------------------------------------------------------------------
def _paddings(p: Any, rank: int) -> list[tuple[int, int]]:
    values = as_ints(p)
    if len(values) != 2 * rank:
        raise InvalidArgumentError(f"paddings must be [{rank}, 2] for an input of rank {rank}, got "
                                   f"{len(values)} values")
    pairs = [(values[2 * i], values[2 * i + 1]) for i in range(rank)]
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise InvalidArgumentError(f"Paddings must be non-negative, got {pairs}")
    return pairs


def _constant_pad(x: Any, p: Any, value: Any = None) -> Any:
    pairs = _paddings(p, x.dim())
    flat = [v for lo, hi in reversed(pairs) for v in (lo, hi)]
    fill = 0 if value is None else value.item()
    if x.dtype == torch.bool:
        return torch.nn.functional.pad(x.to(torch.uint8), flat, value=int(fill)).to(torch.bool)
    return torch.nn.functional.pad(x, flat, value=fill)


@kernel("Pad")
def _pad(ctx: KernelContext):
    return lambda x, p: _constant_pad(x, p)


@kernel("PadV2")
def _pad_v2(ctx: KernelContext):
    return _constant_pad


@functools.lru_cache(maxsize=1024)
def _mirror_index(n: int, lo: int, hi: int, symmetric: bool) -> np.ndarray:
    """Input position of every output position of one padded dimension."""
    limit = n if symmetric else n - 1
    if lo > limit or hi > limit:
        raise InvalidArgumentError(f"paddings must be no greater than the dimension size "
                                   f"{'' if symmetric else 'minus 1 '}for "
                                   f"{'SYMMETRIC' if symmetric else 'REFLECT'} mode: {lo}, {hi} "
                                   f"greater than {limit}")
    positions = np.arange(-lo, n + hi)
    shift = 1 if symmetric else 0
    positions = np.where(positions < 0, -positions - shift, positions)
    return np.where(positions >= n, 2 * n - 2 + shift - positions, positions)


def _mirror_indices(shape: tuple[int, ...], p: Any, mode: str) -> list[Any]:
    pairs = _paddings(p, len(shape))
    return [None if lo == hi == 0 else torch.from_numpy(_mirror_index(n, lo, hi, mode == "SYMMETRIC"))
            for n, (lo, hi) in zip(shape, pairs)]


@kernel("MirrorPad")
def _mirror_pad(ctx: KernelContext):
    mode = ctx.attr("mode")

    def run(x: Any, p: Any) -> Any:
        for dim, index in enumerate(_mirror_indices(tuple(x.shape), p, mode)):
            if index is not None:
                x = torch.index_select(x, dim, index.to(x.device))
        return x

    return run


@kernel("MirrorPadGrad")
def _mirror_pad_grad(ctx: KernelContext):
    mode = ctx.attr("mode")

    def run(g: Any, p: Any) -> Any:
        pairs = _paddings(p, g.dim())
        shape = tuple(n - lo - hi for n, (lo, hi) in zip(g.shape, pairs))
        for dim, index in reversed(list(enumerate(_mirror_indices(shape, p, mode)))):
            if index is not None:
                target = list(g.shape)
                target[dim] = shape[dim]
                g = torch.zeros(target, dtype=g.dtype, device=g.device).index_add_(dim, index.to(g.device), g)
        return g

    return run


# --- Tile / Reverse / ReverseSequence / Roll -------------------------------------------------
@kernel("Tile")
def _tile(ctx: KernelContext):
    static = static_input(ctx, 1)

    def run(x: Any, multiples: Any) -> Any:
        m = [int(v) for v in static.reshape(-1)] if static is not None else as_ints(multiples)
        if len(m) != x.ndim:
            raise InvalidArgumentError(f"Expected multiples argument to be a vector of length "
                                       f"{x.ndim} but got length {len(m)}")
        if any(v < 0 for v in m):
            raise InvalidArgumentError(f"Expected multiples to be non-negative, got {m}")
        if isinstance(x, np.ndarray):  # strings
            return np.tile(x, m)
        return x.repeat(m) if m else x.clone()

    return run


@kernel("ReverseV2")
def _reverse(ctx: KernelContext):
    def run(x: Any, axis: Any) -> Any:
        axes = [a % x.dim() for a in as_ints(axis)] if x.dim() else []
        return torch.flip(x, axes) if axes else x

    return run


@kernel("ReverseSequence")
def _reverse_sequence(ctx: KernelContext):
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")

    def run(x: Any, lengths: Any) -> Any:
        n = x.shape[seq_dim]
        lens = lengths.long().to(x.device)
        if bool((lens < 0).any()) or bool((lens > n).any()):
            raise InvalidArgumentError(f"seq_lengths must be in [0, {n}] (input.dims({seq_dim})), "
                                       f"got {lens.tolist()}")
        moved = x.movedim((batch_dim, seq_dim), (0, 1))  # [batch, n, ...]
        pos = torch.arange(n, device=x.device).unsqueeze(0)
        source = torch.where(pos < lens.unsqueeze(1), lens.unsqueeze(1) - 1 - pos, pos)
        index = source.reshape(source.shape + (1,) * (moved.dim() - 2)).expand(moved.shape)
        return torch.gather(moved, 1, index).movedim((0, 1), (batch_dim, seq_dim))

    return run


@kernel("Roll")
def _roll(ctx: KernelContext):
    def run(x: Any, shift: Any, axis: Any) -> Any:
        shifts, axes = as_ints(shift), as_ints(axis)
        if len(shifts) != len(axes):
            raise InvalidArgumentError(f"shift and axis must have the same size, got {shifts} and {axes}")
        return torch.roll(x, shifts, axes) if axes else x

    return run


# --- OneHot ------------------------------------------------------------------------------------
@kernel("OneHot")
def _one_hot(ctx: KernelContext):
    axis = ctx.attr("axis")

    def run(indices: Any, depth: Any, on: Any, off: Any) -> Any:
        d = int(depth)
        if d < 0:
            raise InvalidArgumentError(f"depth must be non-negative, got {d}")
        idx = indices.long()
        valid = (idx >= 0) & (idx < d)
        hot = torch.nn.functional.one_hot(torch.where(valid, idx, torch.zeros_like(idx)), d).bool()
        hot &= valid.unsqueeze(-1)
        out = torch.where(hot, on, off)
        if axis != -1 and axis != idx.dim():
            out = torch.movedim(out, -1, axis)
        return out

    return run


# --- Unique ----------------------------------------------------------------------------------
def _unique(x: Any, index_dtype: torch.dtype) -> tuple[Any, Any, Any]:
    """Unique values in order of first occurrence, the inverse index and the counts."""
    values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    n = x.numel()
    first = torch.full((values.numel(),), n, dtype=torch.long, device=x.device)
    first.scatter_reduce_(0, inverse, torch.arange(n, device=x.device), "amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=x.device)
    return values[order], rank[inverse].to(index_dtype), counts[order].to(index_dtype)


@kernel("Unique")
def _unique_kernel(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("out_idx"))

    def run(x: Any) -> tuple[Any, Any]:
        y, idx, _ = _unique(x, dtype)
        return y, idx

    return run


@kernel("UniqueWithCounts")
def _unique_with_counts(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("out_idx"))
    return lambda x: _unique(x, dtype)


# --- shapes ----------------------------------------------------------------------------------
@kernel("BroadcastArgs")
def _broadcast_args(ctx: KernelContext):
    def run(a: Any, b: Any) -> Any:
        try:
            shape = np.broadcast_shapes(tuple(as_ints(a)), tuple(as_ints(b)))
        except ValueError:
            raise InvalidArgumentError(f"Incompatible shapes: {as_ints(a)} vs. {as_ints(b)}") from None
        return torch.tensor(shape, dtype=a.dtype)

    return run


@kernel("EnsureShape")
def _ensure_shape(ctx: KernelContext):
    expected = ctx.attr("shape")

    def run(x: Any) -> Any:
        if expected is not None and (len(expected) != x.dim() or any(
                e is not None and e != d for e, d in zip(expected, x.shape))):
            raise InvalidArgumentError(f"Shape of tensor {ctx.op.inputs[0].name} {list(x.shape)} is not "
                                       f"compatible with expected shape {expected}.")
        return x

    return run
