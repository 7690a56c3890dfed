"""Kernels of ``flowmesh/ops/nn_impl.py``: activations and their gradients, top_k, in_top_k."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as nnf

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.ops.nn_impl import SELU_ALPHA, SELU_SCALE


def _zero(t: torch.Tensor) -> torch.Tensor:
    return torch.zeros((), dtype=t.dtype)


def _relu6(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x, 0, 6) if x.dtype.is_floating_point else torch.clamp(x, 0, 6).to(x.dtype)


simple_kernel("Relu6", _relu6)
simple_kernel("Relu6Grad", lambda g, x: torch.where((x > 0) & (x < 6), g, _zero(g)))
simple_kernel("Elu", nnf.elu)
simple_kernel("EluGrad", lambda g, y: torch.where(y > 0, g, g * (y + 1)))
simple_kernel("Selu", torch.selu)
simple_kernel("SeluGrad", lambda g, y: torch.where(y > 0, g * SELU_SCALE, g * (y + SELU_SCALE * SELU_ALPHA)))
simple_kernel("Softplus", nnf.softplus)
simple_kernel("SoftplusGrad", lambda g, x: g * torch.sigmoid(x))
simple_kernel("Softsign", nnf.softsign)
simple_kernel("SoftsignGrad", lambda g, x: g / torch.square(1 + torch.abs(x)))


@kernel("LeakyRelu")
def _leaky_relu(ctx: KernelContext):
    alpha = float(ctx.attr("alpha"))
    return lambda x: torch.where(x > 0, x, x * alpha)


@kernel("LeakyReluGrad")
def _leaky_relu_grad(ctx: KernelContext):
    alpha = float(ctx.attr("alpha"))
    return lambda g, x: torch.where(x > 0, g, g * alpha)


@kernel("Gelu")
def _gelu(ctx: KernelContext):
    mode = "tanh" if ctx.attr("approximate") else "none"
    return lambda x: nnf.gelu(x, approximate=mode)


_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_derivative(x: torch.Tensor) -> torch.Tensor:
    cdf = 0.5 * (1.0 + torch.erf(x * _INV_SQRT_2))
    return cdf + x * torch.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_tanh_derivative(x: torch.Tensor) -> torch.Tensor:
    x2 = x * x
    t = torch.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x2 * x))
    du = _SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x2)
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du


@kernel("GeluGrad")
def _gelu_grad(ctx: KernelContext):
    derivative = _gelu_tanh_derivative if ctx.attr("approximate") else _gelu_derivative
    return lambda g, x: g * derivative(x)


@kernel("TopKV2")
def _top_k(ctx: KernelContext):
    index_dtype = torch_dtype(ctx.op.outputs[1].dtype)

    def top_k(x: torch.Tensor, k: Any) -> tuple[torch.Tensor, torch.Tensor]:
        k = int(k)
        if k < 0:
            raise InvalidArgumentError(f"Need k >= 0, got {k}")
        if x.dim() == 0 or x.shape[-1] < k:
            raise InvalidArgumentError(
                f"input must have at least k columns. Had {x.shape[-1] if x.dim() else 0}, needed {k}")
        values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
        return values[..., :k].contiguous(), indices[..., :k].to(index_dtype)

    return top_k


def _in_top_k(predictions: torch.Tensor, targets: torch.Tensor, k: Any) -> torch.Tensor:
    k = int(k)
    n, classes = predictions.shape
    if targets.shape[0] != n:
        raise InvalidArgumentError(
            f"First dimension of predictions {n} must match length of targets {targets.shape[0]}")
    t = targets.long()
    valid = (t >= 0) & (t < classes)
    safe = torch.where(valid, t, torch.zeros_like(t))
    target_pred = predictions.gather(1, safe.unsqueeze(1))
    finite = torch.isfinite(predictions).all(dim=1)
    more = (predictions > target_pred).sum(dim=1)
    return valid & finite & (more < k)


simple_kernel("InTopKV2", _in_top_k)
