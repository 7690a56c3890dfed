"""Kernels of ``flowmesh/ops/einsum_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Einsum")
def _einsum(ctx: KernelContext):
    equation = ctx.attr("equation")

    def run(*operands: Any) -> Any:
        return torch.einsum(equation, *operands)

    return run
