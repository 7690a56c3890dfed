"""Kernels of ``flowmesh/ops/array_ops.py`` and ``constant_op.py``.

Shape-like arguments that are constants in the graph are read once, when the plan is
built (:func:`static_input`), so the per-step call does no ``.tolist()`` work.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_torch, torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.ops._builders import constant_value
from flowmesh.ops.constant_op import missing_feed_message


def static_input(ctx: KernelContext, index: int) -> Any:
    """The NumPy value of input ``index`` if it is a graph constant, else None."""
    return constant_value(ctx.op.inputs[index])


def as_ints(value: Any) -> list[int]:
    """A shape/axis tensor or array as a list of Python ints."""
    if isinstance(value, torch.Tensor):
        return value.reshape(-1).tolist()
    return [int(v) for v in np.asarray(value).reshape(-1)]


def check_indices(indices: torch.Tensor, limit: int, what: str = "indices") -> None:
    """Raises TensorFlow's 'indices[i] = v is not in [0, limit)' error if any is bad."""
    flat = indices.reshape(-1)
    bad = ((flat < 0) | (flat >= limit)).nonzero()
    if bad.numel():
        i = int(bad[0])
        raise InvalidArgumentError(
            f"{what}[{i}] = {int(flat[i])} is not in [0, {limit})"
        )


# --- constants / placeholders ------------------------------------------------------------
@kernel("Const")
def _const(ctx: KernelContext):
    value = to_torch(ctx.attr("value"), ctx.attr("dtype"), ctx.torch_device)
    return lambda: value


@kernel("Placeholder")
def _placeholder(ctx: KernelContext):
    message = missing_feed_message(ctx.op)

    def unfed() -> None:
        raise InvalidArgumentError(ctx.op.name, ctx.op, message)

    return unfed


simple_kernel("PlaceholderWithDefault", lambda x: x)
simple_kernel("Identity", lambda x: x)
simple_kernel("StopGradient", lambda x: x)


# --- shapes ------------------------------------------------------------------------------
@kernel("Shape")
def _shape(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("out_type"))
    return lambda x: torch.tensor(tuple(x.shape), dtype=dtype)


@kernel("Size")
def _size(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("out_type"))
    return lambda x: torch.tensor(int(np.prod(x.shape)), dtype=dtype)


simple_kernel("Rank", lambda x: torch.tensor(len(x.shape), dtype=torch.int32))


@kernel("Reshape")
def _reshape(ctx: KernelContext):
    static = static_input(ctx, 1)
    if static is not None:
        target = tuple(int(d) for d in static.reshape(-1))
        return lambda x, shape: x.reshape(target)
    return lambda x, shape: x.reshape(as_ints(shape))


simple_kernel("ZerosLike", torch.zeros_like)
simple_kernel("OnesLike", torch.ones_like)


@kernel("Fill")
def _fill(ctx: KernelContext):
    def fill(dims: Any, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return np.full(as_ints(dims), value.reshape(()).item(), dtype=object)
        return torch.full(as_ints(dims), value.item(), dtype=value.dtype, device=value.device)

    return fill


# --- stack / concat / split ------------------------------------------------------------------
@kernel("Pack")
def _pack(ctx: KernelContext):
    axis = ctx.attr("axis")
    if ctx.op.outputs[0].dtype == dtypes.string:
        return lambda *xs: np.stack(xs, axis=axis)
    return lambda *xs: torch.stack(xs, axis)


def single_or_tuple(ctx: KernelContext, fn: Any) -> Any:
    """Kernels with a variable number of outputs return the bare value when there is one
    (the executor unpacks a tuple only for several outputs)."""
    if len(ctx.op.outputs) == 1:
        return lambda *args: fn(*args)[0]
    return fn


@kernel("Unpack")
def _unpack(ctx: KernelContext):
    axis = ctx.attr("axis")
    if ctx.op.inputs[0].dtype == dtypes.string:
        return single_or_tuple(ctx, lambda x: tuple(np.moveaxis(x, axis, 0)))
    return single_or_tuple(ctx, lambda x: tuple(torch.unbind(x, axis)))


@kernel("ConcatV2")
def _concat(ctx: KernelContext):
    static = static_input(ctx, len(ctx.op.inputs) - 1)
    if ctx.op.outputs[0].dtype == dtypes.string:
        return lambda *args: np.concatenate(args[:-1], axis=int(np.asarray(args[-1])))
    if static is not None:
        axis = int(static)
        return lambda *args: torch.cat(args[:-1], axis)
    return lambda *args: torch.cat(args[:-1], int(args[-1]))


@kernel("SplitV")
def _split_v(ctx: KernelContext):
    def split(x: Any, sizes: Any, axis: Any) -> tuple:
        dim = int(axis)
        parts = as_ints(sizes)
        if -1 in parts:
            parts[parts.index(-1)] = x.shape[dim] - (sum(parts) + 1)
        if sum(parts) != x.shape[dim]:
            raise InvalidArgumentError(
                f"Determined shape must either match input shape along split_dim exactly if "
                f"fully specified, or be less than the size of the input along split_dim if not "
                f"fully specified. Got: {sum(parts)} vs {x.shape[dim]}"
            )
        return tuple(torch.split(x, parts, dim))

    return single_or_tuple(ctx, split)


@kernel("ExpandDims")
def _expand_dims(ctx: KernelContext):
    def expand(x: Any, axis: Any) -> Any:
        dim = int(axis) if int(axis) >= 0 else x.ndim + 1 + int(axis)
        if isinstance(x, np.ndarray):  # strings
            return np.expand_dims(x, dim)
        return x.unsqueeze(dim)

    return expand


@kernel("Squeeze")
def _squeeze(ctx: KernelContext):
    axes = tuple(ctx.attr("squeeze_dims"))
    if ctx.op.inputs[0].dtype == dtypes.string:
        return lambda x: np.squeeze(x, axis=axes or None)
    if not axes:
        return lambda x: x.squeeze()

    def squeeze(x: Any) -> Any:
        for a in axes:
            if x.shape[a] != 1:
                raise InvalidArgumentError(
                    f"Can not squeeze dim[{a}], expected a dimension of 1, got {x.shape[a]}"
                )
        return x.squeeze(axes)

    return squeeze


@kernel("Transpose")
def _transpose(ctx: KernelContext):
    static = static_input(ctx, 1)
    if static is not None:
        perm = tuple(int(p) for p in static)
        return lambda x, p: x.permute(perm)
    return lambda x, p: x.permute(as_ints(p))
