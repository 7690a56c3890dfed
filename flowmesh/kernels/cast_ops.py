"""Kernels of ``flowmesh/ops/cast_ops.py``."""

from __future__ import annotations

import torch

from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Cast")
def _cast(ctx: KernelContext):
    target = torch_dtype(ctx.attr("DstT"))
    if ctx.op.inputs[0].dtype.is_complex and not ctx.attr("DstT").is_complex:
        return lambda x: torch.real(x).to(target)  # TensorFlow keeps the real part
    return lambda x: x.to(target)
