"""Kernels of ``ops/quantized_nn_ops.py``: TensorFlow's quantization helpers
(``FloatToQuantizedUnclamped``, ``FloatForOneQuantizedLevel``) and the ops computed on the raw
integer values in float64 (exact for these sizes), TensorFlow's SAME padding applied
explicitly."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as nnf

from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.ops.nn_conv_ops import conv_geometry

_RANGE = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.uint16: (0, 65535),
          torch.int16: (-32768, 32767), torch.int32: (-2 ** 31, 2 ** 31 - 1)}


def float_to_quantized_unclamped(value: float, low: float, high: float, dtype: torch.dtype) -> int:
    """TensorFlow's ``FloatToQuantizedUnclamped``."""
    lowest, highest = _RANGE[dtype]
    if low == high:
        return lowest
    steps = float(highest - lowest + 1)
    scale = steps / ((high - low) * (steps / (steps - 1.0)))
    return int(_round_away(value * scale) - _round_away(low * scale)) + lowest


def _round_away(x: float) -> float:
    """C's ``round``: half away from zero."""
    return float(np.sign(x) * np.floor(abs(x) + 0.5))


def to_quantized(value: float, low: float, high: float, dtype: torch.dtype) -> int:
    """TensorFlow's ``FloatToQuantized`` (clamped, rounding half away from zero)."""
    lowest, highest = _RANGE[dtype]
    if low == high:
        return lowest
    steps = float(highest - lowest + 1)
    scale = steps / ((high - low) * (steps / (steps - 1.0)))
    q = int(_round_away(value * scale) - _round_away(low * scale)) + lowest
    return min(max(q, lowest), highest)


def _scalar(x: Any) -> float:
    return float(torch.as_tensor(x).reshape(-1)[0])


def _pads(attrs: dict[str, Any], h: int, w: int, kh: int, kw: int, dil: tuple[int, int] = (1, 1)) -> list[int]:
    out = []
    for size, k, s, d in ((w, kw, attrs["strides"][2], dil[1]), (h, kh, attrs["strides"][1], dil[0])):
        _, before, after = conv_geometry(size, k, s, d, attrs["padding"])
        out += [before, after]
    return out


@kernel("QuantizedMaxPool", device_types=("CPU",))
def _quantized_max_pool(ctx: KernelContext):
    attrs = ctx.op.attrs
    kh, kw = attrs["ksize"][1:3]

    def run(x: torch.Tensor, low: Any, high: Any) -> tuple:
        xn = x.permute(0, 3, 1, 2).double()
        xn = nnf.pad(xn, _pads(attrs, x.shape[1], x.shape[2], kh, kw), value=float("-inf"))
        y = nnf.max_pool2d(xn, (kh, kw), tuple(attrs["strides"][1:3]))
        return (y.permute(0, 2, 3, 1).contiguous().to(x.dtype), torch.tensor(_scalar(low)),
                torch.tensor(_scalar(high)))
    return run


@kernel("QuantizedAvgPool", device_types=("CPU",))
def _quantized_avg_pool(ctx: KernelContext):
    attrs = ctx.op.attrs
    kh, kw = attrs["ksize"][1:3]

    def run(x: torch.Tensor, low: Any, high: Any) -> tuple:
        xn = x.permute(0, 3, 1, 2).double()
        pads = _pads(attrs, x.shape[1], x.shape[2], kh, kw)
        stride = tuple(attrs["strides"][1:3])
        total = nnf.avg_pool2d(nnf.pad(xn, pads), (kh, kw), stride, divisor_override=1)
        count = nnf.avg_pool2d(nnf.pad(torch.ones_like(xn[:1, :1]), pads), (kh, kw), stride,
                               divisor_override=1)
        mean = torch.round(total / count)  # half to even, as TensorFlow's oneDNN kernel
        return (mean.permute(0, 2, 3, 1).contiguous().to(x.dtype), torch.tensor(_scalar(low)),
                torch.tensor(_scalar(high)))
    return run


@kernel("QuantizedReluX", device_types=("CPU",))
def _quantized_relu_x(ctx: KernelContext):
    from flowmesh.kernels.contract.convert import torch_dtype

    out_dtype = torch_dtype(ctx.attr("out_type"))

    def run(x: torch.Tensor, max_value: Any, low: Any, high: Any) -> tuple:
        lo, hi = _scalar(low), _scalar(high)
        zero = to_quantized(0.0, lo, hi, x.dtype)
        top = to_quantized(_scalar(max_value), lo, hi, x.dtype)
        y = torch.clamp(x.long(), min=zero, max=top)
        return y.to(out_dtype), torch.tensor(lo), torch.tensor(hi)
    return run


@kernel("QuantizedConv2D", device_types=("CPU",))
def _quantized_conv2d(ctx: KernelContext):
    from flowmesh.kernels.contract.convert import torch_dtype

    attrs = ctx.op.attrs
    out_dtype = torch_dtype(attrs["out_type"])
    dil = tuple(attrs["dilations"][1:3])

    def run(x: torch.Tensor, f: torch.Tensor, lx: Any, hx: Any, lf: Any, hf: Any) -> tuple:
        zx = float_to_quantized_unclamped(0.0, _scalar(lx), _scalar(hx), x.dtype)
        zf = float_to_quantized_unclamped(0.0, _scalar(lf), _scalar(hf), f.dtype)
        xn = x.permute(0, 3, 1, 2).double() - zx
        fn = f.permute(3, 2, 0, 1).double() - zf
        xn = nnf.pad(xn, _pads(attrs, x.shape[1], x.shape[2], f.shape[0], f.shape[1], dil))
        y = nnf.conv2d(xn, fn, None, tuple(attrs["strides"][1:3]), 0, dil)
        step_x = (_scalar(hx) - _scalar(lx)) / (_RANGE[x.dtype][1] - _RANGE[x.dtype][0])
        step_f = (_scalar(hf) - _scalar(lf)) / (_RANGE[f.dtype][1] - _RANGE[f.dtype][0])
        step = np.float32(np.float32(step_x) * np.float32(step_f))
        lowest, highest = _RANGE[out_dtype]
        return (y.round().permute(0, 2, 3, 1).contiguous().to(out_dtype),
                torch.tensor(np.float32(step * np.float32(lowest))),
                torch.tensor(np.float32(step * np.float32(highest))))
    return run
