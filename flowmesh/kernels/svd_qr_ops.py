"""Kernels of ``flowmesh/ops/svd_qr_ops.py`` (``torch.linalg.svd`` / ``qr``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Svd")
def _svd(ctx: KernelContext):
    compute_uv, full = bool(ctx.attr("compute_uv", True)), bool(ctx.attr("full_matrices", False))

    def run(x: Any) -> tuple[Any, Any, Any]:
        if not compute_uv:
            empty = torch.zeros(0, dtype=x.dtype, device=x.device)
            return torch.linalg.svdvals(x), empty, empty
        u, s, vh = torch.linalg.svd(x, full_matrices=full)
        return s, u, vh.mH.contiguous()

    return run


@kernel("Qr")
def _qr(ctx: KernelContext):
    mode = "complete" if ctx.attr("full_matrices", False) else "reduced"
    return lambda x: tuple(torch.linalg.qr(x, mode=mode))
