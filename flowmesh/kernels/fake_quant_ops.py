"""Kernels of ``flowmesh/ops/fake_quant_ops.py`` (TensorFlow's ``Nudge`` in float32)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _nudge(lo: Any, hi: Any, quant_min: float, quant_max: float) -> tuple[Any, Any, Any]:
    """``(nudged_min, nudged_max, scale)`` (float32 tensors): zero lands on the grid."""
    scale = (hi - lo) / (quant_max - quant_min)
    zero_from_min = quant_min - lo / scale
    rounded = torch.sign(zero_from_min) * torch.floor(torch.abs(zero_from_min) + 0.5)  # std::round
    zero = torch.where(zero_from_min < quant_min, torch.full_like(lo, quant_min),
                       torch.where(zero_from_min > quant_max, torch.full_like(lo, quant_max), rounded))
    return (quant_min - zero) * scale, (quant_max - zero) * scale, scale


def _grid(ctx: KernelContext) -> tuple[float, float]:
    return (1.0 if ctx.attr("narrow_range") else 0.0), float((1 << ctx.attr("num_bits")) - 1)


def _quantize(x: Any, lo: Any, hi: Any, qmin: float, qmax: float) -> Any:
    nmin, nmax, scale = _nudge(lo, hi, qmin, qmax)
    clamped = torch.minimum(torch.maximum(x, nmin), nmax)
    return torch.floor((clamped - nmin) * (1.0 / scale) + 0.5) * scale + nmin


def _check_range(lo: Any, hi: Any, op: str) -> None:
    if bool((lo > hi).any()):
        raise InvalidArgumentError(f"{op}: min must be <= max, got min {lo.tolist()} max {hi.tolist()}")


@kernel("FakeQuantWithMinMaxArgs")
def _args(ctx: KernelContext):
    qmin, qmax = _grid(ctx)
    lo, hi = ctx.attr("min"), ctx.attr("max")

    def run(x: Any) -> Any:
        t = torch.tensor
        return _quantize(x, t(lo, dtype=x.dtype), t(hi, dtype=x.dtype), qmin, qmax)

    return run


@kernel("FakeQuantWithMinMaxArgsGradient")
def _args_grad(ctx: KernelContext):
    qmin, qmax = _grid(ctx)
    lo, hi = ctx.attr("min"), ctx.attr("max")

    def run(grad: Any, x: Any) -> Any:
        nmin, nmax, _ = _nudge(torch.tensor(lo), torch.tensor(hi), qmin, qmax)
        return grad * ((x >= nmin) & (x <= nmax)).to(grad.dtype)

    return run


def _vars_kernel(ctx: KernelContext):
    qmin, qmax = _grid(ctx)

    def run(x: Any, lo: Any, hi: Any) -> Any:
        _check_range(lo, hi, ctx.op.type)
        return _quantize(x, lo, hi, qmin, qmax)

    return run


kernel("FakeQuantWithMinMaxVars")(_vars_kernel)
kernel("FakeQuantWithMinMaxVarsPerChannel")(_vars_kernel)


def _vars_grad_kernel(ctx: KernelContext):
    qmin, qmax = _grid(ctx)
    per_channel = ctx.op.type.endswith("PerChannelGradient")

    def run(grad: Any, x: Any, lo: Any, hi: Any) -> Any:
        nmin, nmax, _ = _nudge(lo, hi, qmin, qmax)
        below, above = x < nmin, x > nmax
        inside = (~below & ~above).to(grad.dtype)
        dims = tuple(range(x.dim() - 1)) if per_channel else tuple(range(x.dim()))
        dmin = (grad * below.to(grad.dtype)).sum(dim=dims) if dims else grad * below.to(grad.dtype)
        dmax = (grad * above.to(grad.dtype)).sum(dim=dims) if dims else grad * above.to(grad.dtype)
        return grad * inside, dmin.reshape(lo.shape), dmax.reshape(hi.shape)

    return run


kernel("FakeQuantWithMinMaxVarsGradient")(_vars_grad_kernel)
kernel("FakeQuantWithMinMaxVarsPerChannelGradient")(_vars_grad_kernel)
