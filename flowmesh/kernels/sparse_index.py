"""Index helpers shared by the SparseTensor kernels (row-major linear positions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError


def dims_of(shape: Any) -> list[int]:
    """A dense_shape tensor as Python ints."""
    return [int(d) for d in shape.reshape(-1).tolist()]


def linearize(indices: Any, dims: list[int]) -> Any:
    """Row-major positions of ``indices`` ``[N, rank]`` in a tensor of ``dims``."""
    lin = torch.zeros(indices.shape[0], dtype=torch.long, device=indices.device)
    for axis, size in enumerate(dims):
        lin = lin * size + indices[:, axis].long()
    return lin


def unravel(lin: Any, dims: list[int]) -> Any:
    """Inverse of :func:`linearize`: ``[N, rank]`` int64 indices."""
    cols = []
    for size in reversed(dims):
        cols.append(lin % max(size, 1))
        lin = lin // max(size, 1)
    if not cols:
        return torch.zeros((lin.shape[0], 0), dtype=torch.long, device=lin.device)
    return torch.stack(cols[::-1], 1).long()


def take(values: Any, positions: Any) -> Any:
    """``values[positions]`` for torch values and NumPy string arrays."""
    if isinstance(values, np.ndarray):
        return values.reshape(-1)[positions.cpu().numpy()]
    return values[positions]


def cat_values(parts: list[Any]) -> Any:
    if parts and isinstance(parts[0], np.ndarray):
        return np.concatenate([p.reshape(-1) for p in parts])
    return torch.cat(parts)


def check_bounds(op: str, indices: Any, dims: list[int]) -> None:
    """InvalidArgumentError naming ``op`` when an index lies outside ``dims``."""
    if indices.shape[1] != len(dims):
        raise InvalidArgumentError(f"{op}: indices have rank {indices.shape[1]} but dense_shape "
                                   f"{dims} has rank {len(dims)}")
    if indices.numel() == 0:
        return
    limit = torch.tensor(dims, dtype=indices.dtype, device=indices.device)
    bad = ((indices < 0) | (indices >= limit)).any(1)
    if bool(bad.any()):
        row = indices[int(bad.nonzero()[0, 0])].tolist()
        raise InvalidArgumentError(f"{op}: index {row} is out of bounds for dense shape {dims}")


def check_ordered(op: str, indices: Any, dims: list[int]) -> None:
    """InvalidArgumentError when ``indices`` are not in canonical (row-major) order."""
    lin = linearize(indices, dims)
    if lin.numel() > 1 and bool((lin[1:] <= lin[:-1]).any()):
        at = int((lin[1:] <= lin[:-1]).nonzero()[0, 0]) + 1
        raise InvalidArgumentError(
            f"{op}: indices are out of order or repeated at position {at} "
            f"({indices[at - 1].tolist()} then {indices[at].tolist()}) for dense shape {dims}; "
            f"call tf.sparse.reorder first")


def shape_tensor(dims: list[int], like: Any) -> Any:
    return torch.tensor(dims, dtype=torch.int64, device=like.device)
