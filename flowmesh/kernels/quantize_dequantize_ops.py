"""Kernels of ``flowmesh/ops/quantize_dequantize_ops.py`` (TensorFlow's
``QuantizeAndDequantizeOneScaleImpl`` / per-channel rules, in torch)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


def _run(ctx: KernelContext):
    signed, bits = bool(ctx.attr("signed_input")), int(ctx.attr("num_bits"))
    range_given, narrow = bool(ctx.attr("range_given")), bool(ctx.attr("narrow_range"))
    half_up, axis = ctx.attr("round_mode") == "HALF_UP", int(ctx.attr("axis"))

    def run(x: Any, input_min: Any, input_max: Any) -> Any:
        work = x.to(torch.float64) if x.dtype == torch.float64 else x.to(torch.float32)
        if axis == -1:
            low, high = (input_min, input_max) if range_given else (work.min(), work.max())
            shape = ()
        else:
            moved = work.movedim(axis, 0).reshape(work.shape[axis], -1)
            low, high = (input_min, input_max) if range_given else (moved.min(1).values, moved.max(1).values)
            shape = [1] * work.dim()
            shape[axis] = -1
        low, high = low.to(work.dtype).reshape(shape), high.to(work.dtype).reshape(shape)
        if signed:
            q_min = -(1 << (bits - 1)) + (1 if narrow else 0)
            q_max = (1 << (bits - 1)) - 1
        else:
            q_min, q_max = 0, (1 << bits) - 1
        big = torch.finfo(work.dtype).max
        from_min = torch.where(q_min * low > 0, q_min / torch.where(low == 0, torch.ones_like(low), low),
                               torch.full_like(low, big))
        from_max = torch.where(q_max * high > 0, q_max / torch.where(high == 0, torch.ones_like(high), high),
                               torch.full_like(high, big))
        use_min = from_min < from_max
        scale = torch.where(use_min, from_min, from_max)
        inverse = torch.where(use_min, low / (q_min if q_min else 1), high / q_max)
        high = torch.where(use_min, q_max * inverse, high)
        low = torch.where(use_min, low, q_min * inverse)
        if range_given:
            work = torch.minimum(torch.maximum(work, low), high)
        scaled = work * scale
        rounded = torch.floor(scaled + 0.5) if half_up else torch.round(scaled)
        return (rounded * inverse).to(x.dtype)

    return run


kernel("QuantizeAndDequantizeV2")(_run)
kernel("QuantizeAndDequantizeV4")(_run)
