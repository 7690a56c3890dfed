"""Kernels of ``flowmesh/ops/math_ops.py``: elementwise torch functions, one line each.

Integer division and modulo check for zero divisors (TensorFlow's "Integer division by
zero" error) instead of returning garbage.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel


def _div_no_nan(x: Any, y: Any) -> Any:
    """``x / y``, 0 where ``y`` is 0. x / 0 is inf or nan (no error) and masked: 3 torch calls
    instead of 7 (the Keras loss's scalar DivNoNan ran ~20 us a step); a real scalar divisor
    on the CPU (the Keras loss's mean) is tested on the host: 2 calls."""
    quotient = x / y
    if y.dim() == 0 and y.device.type == "cpu" and not y.is_complex():
        return quotient if y.item() != 0 else torch.zeros_like(quotient)
    return torch.where(y == 0, 0, quotient)


for _op_type, _fn in {
    "Neg": torch.neg, "Abs": torch.abs, "Sign": torch.sign, "Square": torch.square,
    "Sqrt": torch.sqrt, "Rsqrt": torch.rsqrt, "Exp": torch.exp, "Log": torch.log,
    "Log1p": torch.log1p, "Expm1": torch.expm1, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh,
    "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan, "Asin": torch.asin, "Acos": torch.acos,
    "Atan": torch.atan, "Sinh": torch.sinh, "Cosh": torch.cosh, "Asinh": torch.asinh,
    "Acosh": torch.acosh, "Atanh": torch.atanh, "Erf": torch.erf, "Erfc": torch.erfc,
    "Lgamma": torch.lgamma, "Digamma": torch.digamma, "Floor": torch.floor,
    "Ceil": torch.ceil, "Round": torch.round, "Rint": torch.round,
    "LogicalNot": torch.logical_not, "IsNan": torch.isnan, "IsInf": torch.isinf,
    "IsFinite": torch.isfinite, "Sub": torch.sub, "Mul": torch.mul, "RealDiv": torch.true_divide,
    "Pow": torch.pow, "Maximum": torch.maximum, "Minimum": torch.minimum, "Atan2": torch.atan2,
    "Less": torch.lt, "LessEqual": torch.le, "Greater": torch.gt, "GreaterEqual": torch.ge,
    "LogicalAnd": torch.logical_and, "LogicalOr": torch.logical_or,
    "SquaredDifference": lambda x, y: torch.square(x - y),
    "Xlogy": lambda x, y: torch.where(x == 0, torch.zeros_like(x), x * torch.log(y)),
    "Xdivy": lambda x, y: torch.where(x == 0, torch.zeros_like(x), x / y),
    "DivNoNan": lambda x, y: _div_no_nan(x, y),
    "MulNoNan": lambda x, y: torch.where(y == 0, 0, x * y),
}.items():
    simple_kernel(_op_type, _fn)


@kernel("Reciprocal")
def _reciprocal(ctx: KernelContext):
    if ctx.op.inputs[0].dtype.is_integer:
        return lambda x: torch.div(torch.ones_like(x), x, rounding_mode="trunc")
    return torch.reciprocal


@kernel("Polygamma")
def _polygamma(ctx: KernelContext):
    def polygamma(a: Any, x: Any) -> Any:
        a, x = torch.broadcast_tensors(a, x)
        flat_a = a.reshape(-1)
        if flat_a.numel() and bool((flat_a != flat_a.round()).any() or (flat_a < 0).any()):
            raise InvalidArgumentError(f"Polygamma order a must be a non-negative integer, got {a}")
        out = torch.empty_like(x)
        for order in torch.unique(flat_a).tolist():
            mask = a == order
            out[mask] = torch.polygamma(int(order), x[mask])
        return out

    return polygamma


def _string_aware(torch_fn: Any, numpy_fn: Any):
    def factory(ctx: KernelContext):
        if ctx.op.inputs[0].dtype == dtypes.string:
            return numpy_fn
        return torch_fn

    return factory


kernel("AddV2")(_string_aware(torch.add, lambda x, y: np.asarray(x + y, dtype=object)))
kernel("Equal")(_string_aware(torch.eq, lambda x, y: torch.from_numpy(np.asarray(x == y, dtype=bool))))
kernel("NotEqual")(_string_aware(torch.ne, lambda x, y: torch.from_numpy(np.asarray(x != y, dtype=bool))))


def _check_divisor(x: Any, y: Any) -> None:
    """Raises for a zero divisor that produces an element (as TensorFlow: an empty result,
    e.g. ``range(0) % rank`` of a scalar in a reduction's gradient, divides nothing)."""
    if x.numel() == 0 or y.numel() == 0:
        return
    if bool((y == 0).any()):
        raise InvalidArgumentError("Integer division by zero")


_UNSIGNED_WIDE = (torch.uint16, torch.uint32, torch.uint64)


def _integer_safe(int_fn: Any, float_fn: Any):
    def factory(ctx: KernelContext):
        if not ctx.op.inputs[0].dtype.is_integer:
            return float_fn

        def run(x: Any, y: Any) -> Any:
            _check_divisor(x, y)
            if x.dtype in _UNSIGNED_WIDE:  # torch's division kernels stop at uint8
                return int_fn(x.to(torch.int64), y.to(torch.int64)).to(x.dtype)
            return int_fn(x, y)

        return run

    return factory


kernel("FloorDiv")(_integer_safe(lambda x, y: torch.div(x, y, rounding_mode="floor"),
                                 lambda x, y: torch.floor(x / y)))
kernel("FloorMod")(_integer_safe(torch.remainder, torch.remainder))
kernel("TruncateDiv")(_integer_safe(lambda x, y: torch.div(x, y, rounding_mode="trunc"),
                                    lambda x, y: torch.trunc(x / y)))
kernel("TruncateMod")(_integer_safe(torch.fmod, torch.fmod))


def _add_n(*xs: Any) -> Any:
    out = torch.add(xs[0], xs[1])
    for x in xs[2:]:
        out.add_(x)
    return out


simple_kernel("AddN", _add_n)


@kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(ctx: KernelContext):
    dtype = torch_dtype(ctx.op.outputs[0].dtype)

    def args(s0: Any, s1: Any) -> tuple[Any, Any]:
        a, b = s0.tolist(), s1.tolist()
        return tuple(torch.tensor(r, dtype=dtype) for r in broadcast_reduction_axes(a, b))

    return args


@functools.lru_cache(maxsize=4096)
def _cached_axes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[list[int], list[int]]:
    n = max(len(a), len(b))
    pa = [1] * (n - len(a)) + list(a)
    pb = [1] * (n - len(b)) + list(b)
    ra, rb = [], []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise InvalidArgumentError(f"Incompatible shapes: {list(a)} vs. {list(b)}")
        if x == 1 and y != 1 or (x == 1 and y == 1 and i < n - len(a)):
            ra.append(i)
        if y == 1 and x != 1 or (x == 1 and y == 1 and i < n - len(b)):
            rb.append(i)
    return ra, rb


def broadcast_reduction_axes(a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    """The axes each operand's gradient must be summed over after broadcasting."""
    return _cached_axes(tuple(a), tuple(b))
