"""Kernel of ``flowmesh/ops/bitcast_ops.py``: torch's ``Tensor.view(dtype)``."""

from __future__ import annotations

from typing import Any

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Bitcast")
def _bitcast(ctx: KernelContext):
    target = ctx.torch_dtype(ctx.attr("type"))
    src, dst = ctx.op.inputs[0].dtype.size, ctx.attr("type").size

    def run(x: Any) -> Any:
        x = x.contiguous()
        if src == dst:
            return x.view(target)
        if src > dst:
            return x.unsqueeze(-1).view(target)
        if x.dim() == 0 or x.shape[-1] != dst // src:
            raise InvalidArgumentError(
                f"Bitcast: the last dimension of the input {list(x.shape)} must be {dst // src}")
        return x.view(target).squeeze(-1)

    return run
