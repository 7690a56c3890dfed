"""Kernels of ``flowmesh/ops/quantize_ops.py``, in NumPy with TensorFlow's float32/double
arithmetic (``quantize_op.cc``, ``dequantize_op.cc``, ``quantization_utils.h``) so the
integers match TensorFlow's bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel

F32 = np.float32


def _limits(dtype: Any) -> tuple[int, int, int]:
    """``(lowest, highest, bits)`` of a quantized dtype's integer storage."""
    info = np.iinfo(dtype.as_numpy_dtype[0])
    return int(info.min), int(info.max), info.bits


def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + x.dtype.type(0.5))


def _scalar(t: Any, what: str) -> float:
    if t.numel() != 1:
        raise InvalidArgumentError(f"{what} must be a scalar (per-tensor quantization), got shape {list(t.shape)}")
    return float(t.reshape(()))


def _out(values: np.ndarray, dtype: Any, lo: float, hi: float) -> tuple[Any, Any, Any]:
    storage = torch.from_numpy(np.ascontiguousarray(values)).to(torch_dtype(dtype))
    return storage, torch.tensor(lo, dtype=torch.float32), torch.tensor(hi, dtype=torch.float32)


def _min_combined(x: np.ndarray, lo: F32, hi: F32, dtype: Any) -> np.ndarray:
    qlo, qhi, _ = _limits(dtype)
    scale = F32((float(qhi) - float(qlo)) / float(hi - lo))
    shifted = (np.minimum(np.maximum(x, lo), hi) - lo) * scale
    if qlo < 0:
        return _round_away(shifted - F32((qhi - qlo + 1) / 2.0)).astype(np.int64)
    return (shifted + F32(0.5)).astype(np.int64)


def _min_first(x: np.ndarray, lo: F32, hi: F32, dtype: Any) -> np.ndarray:
    qlo, qhi, bits = _limits(dtype)
    steps = float(1 << bits)
    scale = F32(0.0 if hi == lo else (steps - 1.0) / (float(hi) - float(lo)))
    min_scaled = _round_away(np.array(lo * scale, F32))
    q = _round_away(x * scale) - (min_scaled - F32(qlo))
    bound_lo, bound_hi = max(F32(qlo), F32(-2.147483648e9)), min(F32(qhi), F32(2.147483520e9))
    return np.minimum(np.maximum(q, bound_lo), bound_hi).astype(np.int64)


def _scaled_range(lo: F32, hi: F32, dtype: Any, narrow: bool) -> tuple[F32, F32, F32]:
    qlo, qhi, _ = _limits(dtype)
    out_lo = qlo + (1 if narrow else 0)
    big = np.finfo(F32).max
    from_min = F32(out_lo / lo) if out_lo * lo > 0 else big
    from_max = F32(qhi / hi) if qhi * hi > 0 else big
    scale = F32(min(from_min, from_max))
    return F32(out_lo / scale), F32(qhi / scale), scale


@kernel("QuantizeV2", device_types=("CPU",))
def _quantize(ctx: KernelContext):
    dtype, mode = ctx.attr("T"), ctx.attr("mode")
    narrow, even = ctx.attr("narrow_range"), ctx.attr("round_mode") == "HALF_TO_EVEN"
    ensure = F32(ctx.attr("ensure_minimum_range"))

    def run(x: Any, in_lo: Any, in_hi: Any) -> Any:
        a, b = F32(_scalar(in_lo, "min_range")), F32(_scalar(in_hi, "max_range"))
        if a > b:
            raise InvalidArgumentError(f"QuantizeV2: min_range {a} must be <= max_range {b}")
        values = x.detach().cpu().numpy().astype(F32)
        lo = min(F32(0), a)
        eps = max(F32(1), max(abs(a), abs(b))) * ensure
        hi = max(F32(0), max(b, F32(lo + eps)))
        if mode == "MIN_COMBINED":
            return _out(_min_combined(values, lo, hi, dtype), dtype, lo, hi)
        if mode == "MIN_FIRST":
            return _out(_min_first(values, lo, hi, dtype), dtype, lo, hi)
        lo, hi, scale = _scaled_range(lo, hi, dtype, narrow)
        scaled = np.minimum(np.maximum(values, lo), hi) * scale
        q = np.rint(scaled) if even else _round_away(scaled)
        return _out(q.astype(np.int64), dtype, lo, hi)

    return run


def dequantize_values(q: np.ndarray, lo: F32, hi: F32, dtype: Any, mode: str, narrow: bool) -> np.ndarray:
    """Float32 values of the quantized integers ``q`` over ``[lo, hi]``."""
    qlo, qhi, bits = _limits(dtype)
    qf = q.astype(np.int64).astype(F32)
    if mode == "MIN_COMBINED":
        half = F32((qhi - qlo + 1) / 2.0) if qlo < 0 else F32(0)
        return (qf + half) * F32((hi - lo) / (F32(qhi) - F32(qlo))) + lo
    if mode == "MIN_FIRST":
        scale = F32((float(hi) - float(lo)) / (float(1 << bits) - 1.0))
        rounded = lo if hi == lo else F32(_round_away(np.array(lo / scale, F32)) * scale)
        return (rounded - F32(qlo) * scale) + qf * scale
    out_lo = qlo + (1 if narrow else 0)
    scale = F32(hi / F32(qhi)) if qlo == 0 else max(F32(lo / F32(out_lo)), F32(hi / F32(qhi)))
    return qf * scale


@kernel("Dequantize", device_types=("CPU",))
def _dequantize(ctx: KernelContext):
    dtype, mode, narrow = ctx.attr("T"), ctx.attr("mode"), ctx.attr("narrow_range")
    out = torch_dtype(ctx.attr("dtype"))

    def run(q: Any, lo: Any, hi: Any) -> Any:
        values = dequantize_values(q.cpu().numpy(), F32(_scalar(lo, "min_range")), F32(_scalar(hi, "max_range")),
                                   dtype, mode, narrow)
        return torch.from_numpy(np.ascontiguousarray(values, dtype=F32)).to(out)

    return run


def _requantize(q: np.ndarray, in_lo: float, in_hi: float, lo: float, hi: float, dtype: Any) -> np.ndarray:
    """TensorFlow's scalar ``RequantizeInNewRange`` (QuantizedToFloat then FloatToQuantized)."""
    qlo, qhi, bits = _limits(dtype)
    steps = float(1 << bits)
    if in_hi == in_lo:
        values = np.full(q.shape, in_lo, np.float64)
    else:
        in_scale = (in_hi - in_lo) * (steps / (steps - 1.0)) / steps
        rounded = np.round(in_lo / float(F32(in_scale))) * float(F32(in_scale))
        values = (rounded + (q.astype(np.float64) - qlo) * in_scale).astype(F32).astype(np.float64)
    if hi == lo:
        return np.full(q.shape, qlo, np.int64)
    scale = steps / ((hi - lo) * (steps / (steps - 1.0)))
    out = _round_away(values * scale) - _round_away(np.array(lo * scale)) + qlo
    return np.clip(out, qlo, qhi).astype(np.int64)


@kernel("QuantizedConcat", device_types=("CPU",))
def _quantized_concat(ctx: KernelContext):
    n, dtype = ctx.attr("N"), ctx.attr("T")

    def run(dim: Any, *rest: Any) -> Any:
        values, mins, maxes = rest[:n], [_scalar(m, "input_mins") for m in rest[n:2 * n]], \
            [_scalar(m, "input_maxes") for m in rest[2 * n:]]
        lo, hi = min(0.0, min(mins)), max(maxes)
        if _limits(dtype)[0] < 0:
            lo, hi = -max(abs(lo), abs(hi)), max(abs(lo), abs(hi))
        parts = []
        for v, a, b in zip(values, mins, maxes):
            q = v.cpu().numpy().astype(np.int64)
            parts.append(q if (a, b) == (lo, hi) else _requantize(q, a, b, lo, hi, dtype))
        axis = int(dim) % parts[0].ndim
        return _out(np.concatenate(parts, axis=axis), dtype, F32(lo), F32(hi))

    return run
