"""Quantization between float32 and the quantized dtypes: ``tf.quantize`` /
``tf.quantize_v2`` (op ``QuantizeV2``), ``tf.dequantize`` and ``tf.quantized_concat``.

Modes as TensorFlow's (``MIN_COMBINED``, ``MIN_FIRST``, ``SCALED``, with
``HALF_AWAY_FROM_ZERO`` / ``HALF_TO_EVEN`` rounding and ``narrow_range``), per tensor;
``axis`` (per-channel ranges) is not implemented and says so. Not differentiable (as in
TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.ops._builders import constant_value, make_op, make_tensor

MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")
_SCALAR = TensorShape([])


def _quantize_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["T"], inputs[0].shape), (dtypes.float32, _SCALAR), (dtypes.float32, _SCALAR)]


def _concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    n = attrs["N"]
    values = inputs[1:1 + n]
    axis = constant_value(inputs[0])
    shape = unknown_shape()
    if axis is not None and all(v.shape.rank is not None for v in values):
        dims = values[0].shape.as_list()
        a = int(axis) % len(dims)
        total = 0
        for v in values:
            d = v.shape.as_list()[a]
            total = None if total is None or d is None else total + d
        shape = TensorShape(dims[:a] + [total] + dims[a + 1:])
    return [(values[0].dtype, shape), (dtypes.float32, _SCALAR), (dtypes.float32, _SCALAR)]


register_op("QuantizeV2", _quantize_shape, not_differentiable=True)
register_op("Dequantize", lambda inputs, attrs: [(attrs["dtype"], inputs[0].shape)], not_differentiable=True)
register_op("QuantizedConcat", _concat_shape, not_differentiable=True)


def _check(mode: str, round_mode: str | None, axis: Any) -> None:
    if mode not in MODES:
        raise InvalidArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    if round_mode is not None and round_mode not in ROUND_MODES:
        raise InvalidArgumentError(f"round_mode must be one of {ROUND_MODES}, got {round_mode!r}")
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise InvalidArgumentError("Round mode 'HALF_TO_EVEN' is only supported for mode 'SCALED', "
                                   f"but mode is '{mode}'.")
    if axis is not None and axis != -1:
        raise UnimplementedError(None, None, "flowmesh quantizes per tensor: axis (per-channel ranges) is not "
                                             "implemented; quantize each channel separately")


def _quantized(T: Any) -> dtypes.DType:  # noqa: N803 - TensorFlow's argument name
    dtype = dtypes.as_dtype(T)
    if not dtype.is_quantized:
        raise TypeError(f"T must be a quantized dtype (qint8, quint8, qint16, quint16, qint32), got {dtype.name}")
    return dtype


def quantize_v2(input: Any, min_range: Any, max_range: Any, T: Any, mode: str = "MIN_COMBINED",  # noqa: A002, N803
                name: str | None = None, round_mode: str = "HALF_AWAY_FROM_ZERO", narrow_range: bool = False,
                axis: int | None = None, ensure_minimum_range: float = 0.01) -> tuple[Tensor, Tensor, Tensor]:
    """Quantizes float32 ``input`` over ``[min_range, max_range]`` to ``T``; returns
    ``(output, output_min, output_max)`` (the range actually used).

    Raises:
        InvalidArgumentError: an unknown mode / round mode, or HALF_TO_EVEN outside SCALED.
        UnimplementedError: ``axis`` (per-channel quantization).
        TypeError: ``T`` is not a quantized dtype.
    """
    _check(mode, round_mode, axis)
    target = _quantized(T)
    tensors = [convert_to_tensor(input, dtype=dtypes.float32, name="input"),
               convert_to_tensor(min_range, dtype=dtypes.float32, name="min_range"),
               convert_to_tensor(max_range, dtype=dtypes.float32, name="max_range")]
    attrs = {"T": target, "mode": mode, "round_mode": round_mode, "narrow_range": bool(narrow_range),
             "axis": -1, "ensure_minimum_range": float(ensure_minimum_range)}
    return tuple(make_op("QuantizeV2", tensors, attrs, name=name or "QuantizeV2").outputs)  # type: ignore[return-value]


def quantize(input: Any, min_range: Any, max_range: Any, T: Any, mode: str = "MIN_COMBINED",  # noqa: A002, N803
             round_mode: str = "HALF_AWAY_FROM_ZERO", name: str | None = None, narrow_range: bool = False,
             axis: int | None = None, ensure_minimum_range: float = 0.01) -> tuple[Tensor, Tensor, Tensor]:
    """``tf.quantize``: :func:`quantize_v2` with TensorFlow's other argument order."""
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name or "Quantize", round_mode=round_mode,
                       narrow_range=narrow_range, axis=axis, ensure_minimum_range=ensure_minimum_range)


def dequantize(input: Any, min_range: Any, max_range: Any, mode: str = "MIN_COMBINED",  # noqa: A002
               name: str | None = None, axis: int | None = None, narrow_range: bool = False,
               dtype: Any = dtypes.float32) -> Tensor:
    """The float values of quantized ``input`` whose range is ``[min_range, max_range]``.

    Raises:
        InvalidArgumentError / UnimplementedError / TypeError: as :func:`quantize_v2`.
    """
    _check(mode, None, axis)
    x = convert_to_tensor(input, name="input")
    _quantized(x.dtype)
    out = dtypes.as_dtype(dtype)
    if out not in (dtypes.float32, dtypes.bfloat16):
        raise TypeError(f"dequantize: dtype must be float32 or bfloat16, got {out.name}")
    tensors = [x, convert_to_tensor(min_range, dtype=dtypes.float32, name="min_range"),
               convert_to_tensor(max_range, dtype=dtypes.float32, name="max_range")]
    attrs = {"T": x.dtype, "mode": mode, "narrow_range": bool(narrow_range), "axis": -1, "dtype": out}
    return make_tensor("Dequantize", tensors, attrs, name=name or "Dequantize")


def quantized_concat(concat_dim: Any, values: Sequence[Any], input_mins: Sequence[Any], input_maxes: Sequence[Any],
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Concatenates quantized tensors with their own ranges into one tensor over a common
    range (requantizing where a range differs); returns ``(output, output_min, output_max)``.

    Raises:
        ValueError: mismatched numbers of values, mins and maxes.
        TypeError: values of different or non-quantized dtypes.
    """
    tensors = [convert_to_tensor(v, name="values") for v in values]
    if not (len(tensors) == len(input_mins) == len(input_maxes)) or not tensors:
        raise ValueError(f"quantized_concat: {len(tensors)} values, {len(input_mins)} input_mins and "
                         f"{len(input_maxes)} input_maxes must be equally many (and at least one)")
    dtype = _quantized(tensors[0].dtype)
    if any(t.dtype != dtype for t in tensors):
        raise TypeError(f"quantized_concat: values must share one dtype, got {[t.dtype.name for t in tensors]}")
    mins = [convert_to_tensor(m, dtype=dtypes.float32, name="input_mins") for m in input_mins]
    maxes = [convert_to_tensor(m, dtype=dtypes.float32, name="input_maxes") for m in input_maxes]
    dim = convert_to_tensor(concat_dim, dtype=dtypes.int32, name="concat_dim")
    op = make_op("QuantizedConcat", [dim] + tensors + mins + maxes, {"N": len(tensors), "T": dtype},
                 name=name or "QuantizedConcat")
    return tuple(op.outputs)  # type: ignore[return-value]
