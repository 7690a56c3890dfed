"""Kernels of ``flowmesh/ops/linalg_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.cpu import onednn_matmul


@kernel("MatMul")
def _matmul(ctx: KernelContext):
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    if onednn_matmul.usable(ctx.torch_device, ctx.input_dtypes):
        return onednn_matmul.matmul_fn(ta, tb)
    if not ta and not tb:
        return torch.matmul
    if ta and tb:
        return lambda a, b: torch.matmul(a.mT, b.mT)
    if ta:
        return lambda a, b: torch.matmul(a.mT, b)
    return lambda a, b: torch.matmul(a, b.mT)


simple_kernel("MatrixDiagPart", lambda x: torch.diagonal(x, 0, -2, -1).clone())
simple_kernel("MatrixDiag", lambda d: torch.diag_embed(d))


def _set_diag(x: Any, diagonal: Any) -> Any:
    out = x.clone()
    torch.diagonal(out, 0, -2, -1).copy_(diagonal)
    return out


simple_kernel("MatrixSetDiag", _set_diag)


def _band_part(x: Any, lower: Any, upper: Any) -> Any:
    m, n = x.shape[-2], x.shape[-1]
    low, up = int(lower), int(upper)
    rows = torch.arange(m, device=x.device).unsqueeze(1)
    cols = torch.arange(n, device=x.device).unsqueeze(0)
    keep = torch.ones((m, n), dtype=torch.bool, device=x.device)
    if low >= 0:
        keep &= (rows - cols) <= low
    if up >= 0:
        keep &= (cols - rows) <= up
    return torch.where(keep, x, torch.zeros_like(x))


simple_kernel("MatrixBandPart", _band_part)
