"""Kernels of ``flowmesh/ops/sparse_ops.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _bad_index(indices: Any, shape: list[int]) -> str | None:
    for row in indices.tolist():
        if len(row) != len(shape) or any(not 0 <= i < n for i, n in zip(row, shape)):
            return f"index {row} is out of bounds for dense shape {shape}"
    return None


@kernel("SparseToDense")
def _sparse_to_dense(ctx: KernelContext):
    validate = bool(ctx.attr("validate_indices", True))

    def to_dense(indices: Any, shape: Any, values: Any, default: Any) -> Any:
        dims = [int(d) for d in (shape.reshape(-1).tolist() if hasattr(shape, "reshape") else shape)]
        idx = indices if indices.dim() == 2 else indices.reshape(-1, 1)
        if validate and idx.numel():
            problem = _bad_index(idx, dims)
            if problem is not None:
                raise InvalidArgumentError(f"SparseToDense: {problem}")
        if isinstance(values, np.ndarray):  # strings
            out = np.full(dims, default[()] if isinstance(default, np.ndarray) else default, dtype=object)
            for row, value in zip(idx.tolist(), np.asarray(values, dtype=object).reshape(-1)):
                out[tuple(row)] = value
            return out
        out = torch.full(dims, default.item(), dtype=values.dtype, device=values.device)
        if idx.numel():
            vals = values.expand(idx.shape[0]) if values.dim() == 0 else values
            out[tuple(idx.t().long())] = vals
        return out

    return to_dense
