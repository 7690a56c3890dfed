"""Kernels of ``flowmesh/ops/gather_ops.py``; ``gather_rows`` also serves ``ResourceGather``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.kernels.array_ops import check_indices, static_input
from flowmesh.kernels.contract.registry import KernelContext, kernel


def gather_rows(params: Any, indices: Any, axis: int = 0) -> Any:
    """``params`` rows at ``indices`` along ``axis``, with TensorFlow's range errors."""
    if isinstance(params, np.ndarray):
        idx = indices.numpy() if isinstance(indices, torch.Tensor) else indices
        return np.take(params, idx, axis=axis)
    flat = indices.reshape(-1)
    if flat.dtype not in (torch.int64, torch.int32):
        flat = flat.long()
    try:
        out = torch.index_select(params, axis, flat)
    except (IndexError, RuntimeError):
        check_indices(indices, params.shape[axis])
        raise
    return out.reshape(params.shape[:axis] + indices.shape + params.shape[axis + 1:])


def batch_gather(params: Any, indices: Any, axis: int, batch_dims: int) -> Any:
    """``tf.gather`` with ``batch_dims > 0``: batch b of the output reads batch b of params."""
    batch = tuple(params.shape[:batch_dims])
    size = int(np.prod(batch, dtype=np.int64))
    pre = int(np.prod(params.shape[batch_dims:axis], dtype=np.int64))
    limit = params.shape[axis]
    p = params.reshape(size, pre, limit, -1)
    idx = indices.reshape(size, -1).long()
    if idx.numel() and (bool(idx.min() < 0) or bool(idx.max() >= limit)):
        check_indices(indices, limit)
    rows = torch.arange(size, device=p.device).view(size, 1, 1)
    cols = torch.arange(pre, device=p.device).view(1, pre, 1)
    out = p[rows, cols, idx.unsqueeze(1)]  # [size, pre, N, post]
    return out.reshape(tuple(params.shape[:axis]) + tuple(indices.shape[batch_dims:])
                       + tuple(params.shape[axis + 1:]))


@kernel("GatherV2")
def _gather(ctx: KernelContext):
    static = static_input(ctx, 2)
    batch_dims = int(ctx.attr("batch_dims", 0))
    if static is not None and not batch_dims:  # the common case: no per-step branching
        axis = int(static)
        return lambda params, indices, a: gather_rows(params, indices, axis % max(params.ndim, 1))

    def run(params: Any, indices: Any, a: Any) -> Any:
        axis = (int(static) if static is not None else int(a)) % max(params.ndim, 1)
        if batch_dims:
            return batch_gather(params, indices, axis, batch_dims)
        return gather_rows(params, indices, axis)

    return run
