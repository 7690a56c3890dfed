"""``tf.fake_quant_with_min_max_*``: simulate ``num_bits`` quantization of float32 values in
training (quantize to the nudged grid over ``[min, max]``, then back to float), and their
gradient ops (straight-through inside the range; the ``vars`` variants also give the
gradients of ``min`` and ``max`` from the values clamped below / above the range).

The range is "nudged" as in TensorFlow so that zero is exactly representable; ``min`` and
``max`` are attrs (``args``), scalars (``vars``) or one per last-dimension channel
(``vars_per_channel``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import check_dtype, make_op, make_tensor, same_shape


def _quant_attrs(num_bits: int, narrow_range: bool, op_type: str) -> dict[str, Any]:
    if not 2 <= int(num_bits) <= 16:
        raise InvalidArgumentError(f"{op_type}: num_bits must be between 2 and 16, inclusive, got {num_bits}")
    return {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)}


def _float32(value: Any, arg: str, op_type: str) -> Tensor:
    t = convert_to_tensor(value, dtype=dtypes.float32, name=arg)
    check_dtype(op_type, t, (dtypes.float32,), arg)
    return t


def _args_grad(op: Operation, grad: Tensor) -> list:
    return [fake_quant_with_min_max_args_gradient(grad, op.inputs[0], **_args_of(op))]


def _args_of(op: Operation) -> dict[str, Any]:
    return {k: op.attrs[k] for k in ("min", "max", "num_bits", "narrow_range")}


def _vars_grad(op: Operation, grad: Tensor) -> list:
    fn = fake_quant_with_min_max_vars_per_channel_gradient if op.type.endswith("PerChannel") else \
        fake_quant_with_min_max_vars_gradient
    return fn(grad, *op.inputs, num_bits=op.attrs["num_bits"], narrow_range=op.attrs["narrow_range"])


def _vars_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.float32, inputs[1].shape), (dtypes.float32, inputs[2].shape), (dtypes.float32, inputs[3].shape)]


register_op("FakeQuantWithMinMaxArgs", same_shape, grad=_args_grad)
register_op("FakeQuantWithMinMaxVars", same_shape, grad=_vars_grad)
register_op("FakeQuantWithMinMaxVarsPerChannel", same_shape, grad=_vars_grad)
register_op("FakeQuantWithMinMaxArgsGradient", lambda i, a: [(dtypes.float32, i[1].shape)], not_differentiable=True)
register_op("FakeQuantWithMinMaxVarsGradient", _vars_grad_shape, not_differentiable=True)
register_op("FakeQuantWithMinMaxVarsPerChannelGradient", _vars_grad_shape, not_differentiable=True)


def fake_quant_with_min_max_args(inputs: Any, min: float = -6.0, max: float = 6.0, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: str | None = None) -> Tensor:
    """``inputs`` (float32) quantized to ``num_bits`` over the nudged ``[min, max]`` and back.

    Raises:
        InvalidArgumentError: ``min >= max`` or ``num_bits`` outside ``[2, 16]``.
    """
    op_type = "FakeQuantWithMinMaxArgs"
    if not float(min) < float(max):
        raise InvalidArgumentError(f"{op_type}: min has to be smaller than max, was: {min} >= {max}")
    attrs = {"min": float(min), "max": float(max), **_quant_attrs(num_bits, narrow_range, op_type)}
    return make_tensor(op_type, [_float32(inputs, "inputs", op_type)], attrs, name=name or op_type)


def fake_quant_with_min_max_args_gradient(gradients: Any, inputs: Any, min: float = -6.0, max: float = 6.0,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: str | None = None) -> Tensor:
    """``gradients`` where ``inputs`` lie inside the nudged range, 0 elsewhere."""
    op_type = "FakeQuantWithMinMaxArgsGradient"
    attrs = {"min": float(min), "max": float(max), **_quant_attrs(num_bits, narrow_range, op_type)}
    tensors = [_float32(gradients, "gradients", op_type), _float32(inputs, "inputs", op_type)]
    return make_tensor(op_type, tensors, attrs, name=name or op_type)


def _vars_op(op_type: str, values: Sequence[Any], names: Sequence[str], num_bits: int, narrow_range: bool,
             name: str | None) -> Operation:
    tensors = [_float32(v, n, op_type) for v, n in zip(values, names)]
    return make_op(op_type, tensors, _quant_attrs(num_bits, narrow_range, op_type), name=name or op_type)


def fake_quant_with_min_max_vars(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: str | None = None) -> Tensor:
    """Like :func:`fake_quant_with_min_max_args` with scalar float32 tensors ``min``/``max``."""
    return _vars_op("FakeQuantWithMinMaxVars", [inputs, min, max], ["inputs", "min", "max"], num_bits,
                    narrow_range, name).outputs[0]


def fake_quant_with_min_max_vars_per_channel(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                             narrow_range: bool = False, name: str | None = None) -> Tensor:
    """Like :func:`fake_quant_with_min_max_vars` with one ``min``/``max`` per entry of the last
    dimension of ``inputs``."""
    return _vars_op("FakeQuantWithMinMaxVarsPerChannel", [inputs, min, max], ["inputs", "min", "max"],
                    num_bits, narrow_range, name).outputs[0]


def fake_quant_with_min_max_vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max)``."""
    op = _vars_op("FakeQuantWithMinMaxVarsGradient", [gradients, inputs, min, max],
                  ["gradients", "inputs", "min", "max"], num_bits, narrow_range, name)
    return tuple(op.outputs)  # type: ignore[return-value]


def fake_quant_with_min_max_vars_per_channel_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                                      num_bits: int = 8, narrow_range: bool = False,
                                                      name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max)``, the last two per channel."""
    op = _vars_op("FakeQuantWithMinMaxVarsPerChannelGradient", [gradients, inputs, min, max],
                  ["gradients", "inputs", "min", "max"], num_bits, narrow_range, name)
    return tuple(op.outputs)  # type: ignore[return-value]
