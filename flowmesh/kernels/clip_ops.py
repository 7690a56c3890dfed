"""Kernels of ``flowmesh/ops/clip_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("ClipByValue")
def _clip(ctx: KernelContext):
    def clip(x: Any, lo: Any, hi: Any) -> Any:
        if lo.dim() == 0 and hi.dim() == 0:
            return torch.clamp(x, lo.item(), hi.item())
        return torch.minimum(torch.maximum(x, lo), hi)

    return clip
