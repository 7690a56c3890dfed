"""``QuantizeAndDequantizeV2`` / ``V4``: simulated integer quantization (round to a
``num_bits`` grid over ``[input_min, input_max]``, or the input's own range, then back to
floats), TensorFlow's ``tf.quantization.quantize_and_dequantize(_v2)``.

Gradients are TensorFlow's: V2 passes the gradient straight through; V4 passes it where the
input lies within ``[input_min, input_max]`` and gives the range zero gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import make_tensor


def _shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[0].dtype, inputs[0].shape)]


def _v4_grad(op: Any, grad: Tensor) -> list:
    from flowmesh.ops import array_ops, math_ops
    from flowmesh.ops.select_ops import where

    x, low, high = op.inputs
    axis = op.get_attr("axis")
    if axis != -1 and x.shape.rank is not None:
        shape = [1] * x.shape.rank
        shape[axis] = -1
        low, high = array_ops.reshape(low, shape), array_ops.reshape(high, shape)
    inside = math_ops.logical_and(x >= low, x <= high)
    return [where(inside, grad, array_ops.zeros_like(grad)), array_ops.zeros_like(op.inputs[1]),
            array_ops.zeros_like(op.inputs[2])]


register_op("QuantizeAndDequantizeV2", _shape, grad=lambda op, grad: [grad, None, None])
register_op("QuantizeAndDequantizeV4", _shape, grad=_v4_grad)


def _quantize_and_dequantize(op_type: str, input: Any, input_min: Any, input_max: Any,  # noqa: A002
                             signed_input: bool, num_bits: int, range_given: bool, round_mode: str,
                             name: str | None, narrow_range: bool, axis: int | None) -> Tensor:
    if round_mode not in ("HALF_TO_EVEN", "HALF_UP"):
        raise ValueError(f"round_mode must be HALF_TO_EVEN or HALF_UP, got {round_mode}")
    x = convert_to_tensor(input, name="input")
    if axis is not None and axis < 0 and x.shape.rank is not None:
        axis += x.shape.rank
    low = convert_to_tensor(input_min, dtype=x.dtype, name="input_min")
    high = convert_to_tensor(input_max, dtype=x.dtype, name="input_max")
    attrs = {"signed_input": bool(signed_input), "num_bits": int(num_bits), "range_given": bool(range_given),
             "round_mode": round_mode, "narrow_range": bool(narrow_range), "axis": -1 if axis is None else int(axis),
             "T": x.dtype}
    return make_tensor(op_type, [x, low, high], attrs, name=name or op_type)


def quantize_and_dequantize(input: Any, input_min: Any, input_max: Any, signed_input: bool = True,  # noqa: A002
                            num_bits: int = 8, range_given: bool = False, round_mode: str = "HALF_TO_EVEN",
                            name: str | None = None, narrow_range: bool = False, axis: int | None = None) -> Tensor:
    """Quantizes then dequantizes ``input`` (gradient: straight through).

    Args:
        input_min, input_max: the range (used when ``range_given``; per ``axis`` slice
            when ``axis`` is given).
        signed_input: a signed grid (``-2^(b-1) .. 2^(b-1) - 1``; ``narrow_range`` drops the
            lowest value) or ``0 .. 2^b - 1``.
        round_mode: ``HALF_TO_EVEN`` or ``HALF_UP``.

    Raises:
        ValueError: an unknown ``round_mode``.
    """
    return _quantize_and_dequantize("QuantizeAndDequantizeV2", input, input_min, input_max, signed_input,
                                    num_bits, range_given, round_mode, name, narrow_range, axis)


def quantize_and_dequantize_v2(input: Any, input_min: Any, input_max: Any, signed_input: bool = True,  # noqa: A002
                               num_bits: int = 8, range_given: bool = False, round_mode: str = "HALF_TO_EVEN",
                               name: str | None = None, narrow_range: bool = False,
                               axis: int | None = None) -> Tensor:
    """:func:`quantize_and_dequantize` whose gradient is zero outside the range (V4)."""
    return _quantize_and_dequantize("QuantizeAndDequantizeV4", input, input_min, input_max, signed_input,
                                    num_bits, range_given, round_mode, name, narrow_range, axis)
