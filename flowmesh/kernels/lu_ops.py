"""Kernel of ``flowmesh/ops/lu_ops.py`` (``torch.linalg.lu``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Lu")
def _lu(ctx: KernelContext):
    idx = ctx.torch_dtype(ctx.attr("output_idx_type"))

    def run(x: Any) -> tuple[Any, Any]:
        perm_matrix, lower, upper = torch.linalg.lu(x)
        packed = torch.tril(lower, -1) + upper
        # x = P L U, so x[perm] = L U with perm[i] the row where column i of P has its 1.
        return packed, perm_matrix.argmax(dim=-2).to(idx)

    return run
