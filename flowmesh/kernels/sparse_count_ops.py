"""Kernels of ``flowmesh/ops/sparse_count_ops.py`` (``tf.sparse.bincount``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _count(ctx: KernelContext, rows: Any, values: Any, weights: Any, batch: int | None) -> tuple[Any, Any, Any]:
    minlength, maxlength = int(ctx.attr("minlength", -1)), int(ctx.attr("maxlength", -1))
    binary = bool(ctx.attr("binary_output", False))
    out_dtype = weights.dtype if weights.numel() else values.dtype
    if bool((values < 0).any()):
        raise InvalidArgumentError(f"{ctx.op.type}: bincount values must be non-negative, got "
                                   f"{int(values.min())}")
    keep = values < maxlength if maxlength >= 0 else torch.ones_like(values, dtype=torch.bool)
    size = int(values.max()) + 1 if values.numel() else 0
    size = max(size, minlength) if minlength >= 0 else size
    size = min(size, maxlength) if maxlength >= 0 else size
    vals, r = values[keep].long(), rows[keep].long()
    w = weights.reshape(-1)[keep] if weights.numel() else torch.ones_like(vals, dtype=out_dtype)
    key = r * max(size, 1) + vals
    ids, inverse = torch.unique(key, sorted=True, return_inverse=True)
    total = torch.zeros(ids.numel(), dtype=w.dtype).index_add_(0, inverse, w)
    if binary:
        total = torch.ones_like(total)
    if batch is None:
        return ids.reshape(-1, 1), total.to(out_dtype), torch.tensor([size], dtype=torch.int64)
    ind = torch.stack([ids // max(size, 1), ids % max(size, 1)], 1)
    return ind, total.to(out_dtype), torch.tensor([batch, size], dtype=torch.int64)


@kernel("DenseCountSparseOutput")
def _dense_count(ctx: KernelContext):
    def run(values: Any, weights: Any) -> tuple[Any, Any, Any]:
        if values.dim() == 1:
            return _count(ctx, torch.zeros_like(values), values, weights, None)
        rows = torch.arange(values.shape[0]).repeat_interleave(values.shape[1])
        return _count(ctx, rows, values.reshape(-1), weights, values.shape[0])

    return run


@kernel("SparseCountSparseOutput")
def _sparse_count(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any, weights: Any) -> tuple[Any, Any, Any]:
        if shape.numel() == 1:
            return _count(ctx, torch.zeros_like(values), values, weights, None)
        return _count(ctx, indices[:, 0], values, weights, int(shape[0]))

    return run
