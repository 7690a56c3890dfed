"""Kernels of ``flowmesh/ops/embedding_ops.py``: DynamicPartition and DynamicStitch."""

from __future__ import annotations

import math
from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("DynamicPartition")
def _dynamic_partition(ctx: KernelContext):
    n = int(ctx.attr("num_partitions"))

    def partition(data: torch.Tensor, partitions: torch.Tensor) -> Any:
        prefix = partitions.dim()
        if tuple(data.shape[:prefix]) != tuple(partitions.shape):
            raise InvalidArgumentError(
                f"data.shape must start with partitions.shape, got data.shape = {list(data.shape)}, "
                f"partitions.shape = {list(partitions.shape)}")
        flat_p = partitions.reshape(-1).long()
        bad = ((flat_p < 0) | (flat_p >= n)).nonzero()
        if bad.numel():
            i = int(bad[0])
            raise InvalidArgumentError(f"partitions[{i}] = {int(flat_p[i])} is not in [0, {n})")
        flat = data.reshape((flat_p.numel(),) + tuple(data.shape[prefix:]))
        if n == 1:  # a single-output kernel returns its value, not a 1-tuple
            return flat
        order = torch.argsort(flat_p, stable=True)
        counts = torch.bincount(flat_p, minlength=n).tolist()
        return tuple(torch.split(flat.index_select(0, order), counts))

    return partition


@kernel("DynamicStitch")
def _dynamic_stitch(ctx: KernelContext):
    n = int(ctx.attr("N"))

    def stitch(*args: Any) -> torch.Tensor:
        indices, data = args[:n], args[n:]
        tail = tuple(data[0].shape[indices[0].dim():])
        flat_idx = [i.reshape(-1).long() for i in indices]
        sizes = [int(i.max()) + 1 for i in flat_idx if i.numel()]
        rows = max(sizes) if sizes else 0
        if any(int(i.min()) < 0 for i in flat_idx if i.numel()):
            raise InvalidArgumentError("DynamicStitch: indices must be >= 0")
        out = torch.zeros((rows,) + tail, dtype=data[0].dtype)
        for idx, values in zip(flat_idx, data):
            if values.numel() != idx.numel() * math.prod(tail):
                raise InvalidArgumentError(
                    f"DynamicStitch: data shape {list(values.shape)} does not match indices "
                    f"({idx.numel()} entries) and element shape {list(tail)}")
            if idx.numel():
                out.index_copy_(0, idx, values.reshape((idx.numel(),) + tail))
        return out

    return stitch
