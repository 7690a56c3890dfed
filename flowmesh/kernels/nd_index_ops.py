"""Kernels of ``flowmesh/ops/nd_index_ops.py``.

N-d indices are turned into row numbers of the target viewed as ``[prod(shape[:D]),
rest...]``; bad indices raise TensorFlow's "does not index into param shape" error.
"""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _linear_rows(indices: Any, shape: tuple[int, ...], what: str) -> tuple[Any, int]:
    """Row numbers (flattened ``indices[..., :D]``) into ``shape[:D]``, and ``D``."""
    depth = indices.shape[-1]
    if depth > len(shape):
        raise InvalidArgumentError(f"index innermost dimension length must be <= {what} rank; saw: "
                                   f"{depth} vs. {len(shape)}")
    flat = indices.reshape(-1, depth).long()
    limits = torch.tensor(shape[:depth], dtype=torch.long, device=flat.device)
    bad = ((flat < 0) | (flat >= limits)).any(dim=1).nonzero()
    if bad.numel():
        i = int(bad[0])
        raise InvalidArgumentError(f"indices[{i}] = {flat[i].tolist()} does not index into {what} "
                                   f"shape {list(shape)}")
    strides = [1] * depth
    for k in range(depth - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    rows = (flat * torch.tensor(strides, dtype=torch.long, device=flat.device)).sum(dim=1)
    return rows, depth


def _rows_view(x: Any, depth: int) -> Any:
    return x.reshape((-1,) + tuple(x.shape[depth:]))


@kernel("GatherNd")
def _gather_nd(ctx: KernelContext):
    def run(params: Any, indices: Any) -> Any:
        rows, depth = _linear_rows(indices, tuple(params.shape), "param")
        out = _rows_view(params, depth)[rows]
        return out.reshape(tuple(indices.shape[:-1]) + tuple(params.shape[depth:]))

    return run


def _scatter_into(target: Any, indices: Any, updates: Any, mode: str) -> Any:
    rows, depth = _linear_rows(indices, tuple(target.shape), "output")
    view = _rows_view(target, depth)
    expected = (rows.numel(),) + tuple(view.shape[1:])
    if updates.numel() != int(torch.tensor(expected).prod()):
        raise InvalidArgumentError(f"updates of shape {list(updates.shape)} do not match indices "
                                   f"{list(indices.shape)} into shape {list(target.shape)}")
    values = updates.reshape(expected)
    if mode == "update":
        view[rows] = values
    elif mode in ("amax", "amin"):
        index = rows.reshape((-1,) + (1,) * (values.dim() - 1)).expand_as(values)
        view.scatter_reduce_(0, index, values, mode, include_self=True)
    else:
        view.index_add_(0, rows, values if mode == "add" else -values)
    return target


@kernel("ScatterNd")
def _scatter_nd(ctx: KernelContext):
    def run(indices: Any, updates: Any, shape: Any) -> Any:
        dims = as_ints(shape)
        if any(d < 0 for d in dims):
            raise InvalidArgumentError(f"ScatterNd shape must be non-negative, got {dims}")
        out = torch.zeros(dims, dtype=updates.dtype, device=updates.device)
        return _scatter_into(out, indices, updates, "add")

    return run


def _tensor_scatter(mode: str):
    def factory(ctx: KernelContext):
        return lambda tensor, indices, updates: _scatter_into(tensor.clone(), indices, updates, mode)

    return factory


kernel("TensorScatterUpdate")(_tensor_scatter("update"))
kernel("TensorScatterAdd")(_tensor_scatter("add"))
kernel("TensorScatterSub")(_tensor_scatter("sub"))
kernel("TensorScatterMax")(_tensor_scatter("amax"))
kernel("TensorScatterMin")(_tensor_scatter("amin"))
