"""Kernels of ``flowmesh/ops/strided_slice_ops.py``.

The slice spec becomes a Python index; torch rejects negative steps, so those dimensions
are flipped and indexed with a positive step. Constant specs are resolved once, when the
plan is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints, static_input
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.ops.strided_slice_ops import MASKS, expand_items, slice_spec


def torch_index(shape: tuple[int, ...], items: list[Any]) -> tuple[list[int], tuple[Any, ...]]:
    """Turns index items into (dims to flip, torch index with positive steps).

    Raises:
        InvalidArgumentError: a shrink index is out of range.
    """
    flips: list[int] = []
    index: list[Any] = []
    for it, dim in expand_items(items, len(shape)):
        if it is None:
            index.append(None)
            continue
        n = shape[dim]
        if isinstance(it, int):
            if not -n <= it < n:
                raise InvalidArgumentError(
                    f"slice index {it} of dimension {dim} out of bounds (size {n})."
                )
            index.append(it)
        elif it.step is not None and it.step < 0:
            start, stop, step = it.indices(n)
            flips.append(dim)
            index.append(slice(n - 1 - start, n - 1 - stop, -step))
        else:
            index.append(it)
    return flips, tuple(index)


def _items(attrs: dict[str, Any], begin: Any, end: Any, strides: Any) -> list[Any]:
    return slice_spec(attrs, as_ints(begin), as_ints(end), as_ints(strides))


def _apply(x: Any, items: list[Any]) -> Any:
    if isinstance(x, np.ndarray):  # strings
        expand_items(items, x.ndim)  # validates the rank
        return x[tuple(items)]
    flips, index = torch_index(tuple(x.shape), items)
    if flips:
        x = torch.flip(x, flips)
    return x[index]


@kernel("StridedSlice")
def _strided_slice(ctx: KernelContext):
    attrs = {k: ctx.attr(k) for k in MASKS}
    statics = [static_input(ctx, i) for i in (1, 2, 3)]
    if all(s is not None for s in statics):
        items = _items(attrs, *statics)
        return lambda x, b, e, s: _apply(x, items)
    return lambda x, b, e, s: _apply(x, _items(attrs, b, e, s))


@kernel("StridedSliceGrad")
def _strided_slice_grad(ctx: KernelContext):
    attrs = {k: ctx.attr(k) for k in MASKS}

    def grad(shape: Any, b: Any, e: Any, s: Any, dy: Any) -> Any:
        dims = tuple(as_ints(shape))
        out = torch.zeros(dims, dtype=dy.dtype, device=dy.device)
        flips, index = torch_index(dims, _items(attrs, b, e, s))
        out[index] = dy
        return torch.flip(out, flips) if flips else out

    return grad
