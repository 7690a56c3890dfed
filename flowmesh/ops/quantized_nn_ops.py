"""Quantized ``tf.nn`` ops on TensorFlow's quantized dtypes: ``QuantizedMaxPool`` /
``QuantizedAvgPool`` (pooling of the raw values, the range passes through),
``QuantizedReluX`` (clamp to the quantized 0 and ``max_value``) and ``QuantizedConv2D``
(integer convolution of the offset-free values, qint32 output with the product range);
kernels in ``kernels/quantized_nn_ops.py``. None is differentiable (as in TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_op
from flowmesh.ops.nn_conv_ops import _conv_output_shape, _pool_output_shape, conv_attrs, pool_attrs

_SCALAR = TensorShape([])


def _pool_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[0].dtype, _pool_output_shape(inputs[0].shape, attrs)),
            (dtypes.float32, _SCALAR), (dtypes.float32, _SCALAR)]


def _conv_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["out_type"], _conv_output_shape(inputs[0].shape, inputs[1].shape, attrs)),
            (dtypes.float32, _SCALAR), (dtypes.float32, _SCALAR)]


register_op("QuantizedMaxPool", _pool_shape, not_differentiable=True)
register_op("QuantizedAvgPool", _pool_shape, not_differentiable=True)
register_op("QuantizedReluX", lambda i, a: [(a["out_type"], i[0].shape), (dtypes.float32, _SCALAR),
                                            (dtypes.float32, _SCALAR)], not_differentiable=True)
register_op("QuantizedConv2D", _conv_shape, not_differentiable=True)


def _quantized(value: Any, what: str) -> Tensor:
    tensor = convert_to_tensor(value, name=what)
    if not tensor.dtype.is_quantized:
        raise TypeError(f"{what} must have a quantized dtype (qint8, quint8, ...), got "
                        f"{tensor.dtype.name}; quantize it with tf.quantize")
    return tensor


def _floats(*values: Any) -> list[Tensor]:
    return [convert_to_tensor(v, dtype=dtypes.float32) for v in values]


def _pool(op_type: str, input: Any, min_input: Any, max_input: Any, ksize: Any,  # noqa: A002
          strides: Any, padding: str, name: str | None) -> tuple[Tensor, Tensor, Tensor]:
    attrs = pool_attrs(ksize, strides, padding, "NHWC", op_type)
    inputs = [_quantized(input, "input"), *_floats(min_input, max_input)]
    return tuple(make_op(op_type, inputs, attrs, name=name or op_type).outputs)


def quantized_max_pool(input: Any, min_input: Any, max_input: Any, ksize: Any,  # noqa: A002
                       strides: Any, padding: str, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Max pooling of a quantized NHWC tensor (``tf.nn.quantized_max_pool``); returns
    ``(output, min_output, max_output)`` (the input's range)."""
    return _pool("QuantizedMaxPool", input, min_input, max_input, ksize, strides, padding, name)


def quantized_avg_pool(input: Any, min_input: Any, max_input: Any, ksize: Any,  # noqa: A002
                       strides: Any, padding: str, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Average pooling of a quantized NHWC tensor, the mean rounded half to even as
    TensorFlow's default (oneDNN) kernel does; its Eigen kernel (``TF_ENABLE_ONEDNN_OPTS=0``)
    truncates (``tf.nn.quantized_avg_pool``). Returns ``(output, min_output, max_output)``."""
    return _pool("QuantizedAvgPool", input, min_input, max_input, ksize, strides, padding, name)


def quantized_relu_x(features: Any, max_value: Any, min_features: Any, max_features: Any,
                     out_type: Any = dtypes.quint8, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``min(max(x, 0), max_value)`` in the quantized domain (``tf.nn.quantized_relu_x``);
    returns ``(activations, min_activations, max_activations)``."""
    inputs = [_quantized(features, "features"), *_floats(max_value, min_features, max_features)]
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return tuple(make_op("QuantizedReluX", inputs, attrs, name=name or "QuantizedReluX").outputs)


def quantized_conv2d(input: Any, filter: Any, min_input: Any, max_input: Any,  # noqa: A002
                     min_filter: Any, max_filter: Any, strides: Any, padding: str,
                     out_type: Any = dtypes.qint32, dilations: Any = (1, 1, 1, 1),
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """2-D convolution of quantized NHWC input and HWIO filter (``tf.nn.quantized_conv2d``):
    sums of ``(x - zero_x) * (f - zero_f)`` as ``out_type`` (qint32) with the product range;
    returns ``(output, min_output, max_output)``."""
    attrs = conv_attrs(strides, padding, "NHWC", list(dilations), "QuantizedConv2D")
    attrs["out_type"] = dtypes.as_dtype(out_type)
    inputs = [_quantized(input, "input"), _quantized(filter, "filter"),
              *_floats(min_input, max_input, min_filter, max_filter)]
    return tuple(make_op("QuantizedConv2D", inputs, attrs, name=name or "QuantizedConv2D").outputs)
