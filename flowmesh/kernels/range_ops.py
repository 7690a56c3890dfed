"""Kernels of ``flowmesh/ops/range_ops.py``."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("Range")
def _range(ctx: KernelContext):
    dtype = torch_dtype(ctx.op.outputs[0].dtype)

    def range_(start: Any, limit: Any, delta: Any) -> Any:
        s, lim, d = start.item(), limit.item(), delta.item()
        if d == 0:
            raise InvalidArgumentError("Requires delta != 0")
        if (d > 0 and s > lim) or (d < 0 and s < lim):
            raise InvalidArgumentError(
                f"Requires start <= limit when delta > 0 (or start >= limit when delta < 0): "
                f"start={s}, limit={lim}, delta={d}")
        return torch.arange(s, lim, d, dtype=dtype)

    return range_


@kernel("LinSpace")
def _linspace(ctx: KernelContext):
    axis = ctx.attr("axis")

    def linspace(start: Any, stop: Any, num: Any) -> Any:
        n = int(num)
        if n < 0:
            raise InvalidArgumentError(f"Requires num >= 0, got {n}")
        start, stop = torch.broadcast_tensors(start, stop)
        dim = axis % (start.dim() + 1)
        delta = (stop - start) / max(n - 1, 1)
        steps = torch.arange(n, dtype=start.dtype, device=start.device)
        steps = steps.reshape([1] * dim + [n] + [1] * (start.dim() - dim))
        out = start.unsqueeze(dim) + steps * delta.unsqueeze(dim)
        if n > 1:
            out.narrow(dim, n - 1, 1).copy_(stop.unsqueeze(dim))
        return out

    return linspace


@kernel("InvertPermutation")
def _invert_permutation(ctx: KernelContext):
    def invert(x: Any) -> Any:
        n = x.numel()
        if x.dim() != 1 or not torch.equal(torch.sort(x).values, torch.arange(n, dtype=x.dtype)):
            raise InvalidArgumentError(f"invert_permutation input must be a permutation of "
                                       f"0..{n - 1}, got {x.tolist()}")
        return torch.argsort(x).to(x.dtype)

    return invert
