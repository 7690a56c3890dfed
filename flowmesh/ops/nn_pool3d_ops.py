"""3-D pooling: ``MaxPool3D``/``AvgPool3D`` and their gradients ``MaxPool3DGrad`` (not
differentiable further) and ``AvgPool3DGrad`` (linear: its gradient is ``AvgPool3D``);
kernels in ``kernels/nn_conv3d_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops._builders import FLOATS, check_dtype, constant_value, make_tensor
from flowmesh.ops.nn_conv3d_ops import attrs3, output_shape3, spatial3


def _pool_attrs(op: Any) -> dict[str, Any]:
    return {k: op.attrs[k] for k in ("ksize", "strides", "padding", "data_format")}


def _pool_shape(op_type: str):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        x = inputs[0].shape
        window = [attrs["ksize"][d] for d in spatial3(attrs["data_format"])]
        channels = None if x.rank is None else x.as_list()[4 if attrs["data_format"] == "NDHWC" else 1]
        return [(inputs[0].dtype, output_shape3(op_type, x, window, channels, attrs))]
    return shape_fn


def _avg_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    sizes = constant_value(inputs[0])
    return [(inputs[1].dtype, TensorShape([int(s) for s in sizes]) if sizes is not None
             else TensorShape([None] * 5))]


def _max_pool3d_grad(op: Any, grad: Tensor) -> list:
    return [make_tensor("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs(op))]


def _avg_pool3d_grad(op: Any, grad: Tensor) -> list:
    return [make_tensor("AvgPool3DGrad", [array_ops.shape(op.inputs[0]), grad], _pool_attrs(op))]


def _avg_pool3d_grad_grad(op: Any, grad: Tensor) -> list:
    return [None, make_tensor("AvgPool3D", [grad], _pool_attrs(op))]


register_op("MaxPool3D", _pool_shape("MaxPool3D"), grad=_max_pool3d_grad)
register_op("AvgPool3D", _pool_shape("AvgPool3D"), grad=_avg_pool3d_grad)
register_op("MaxPool3DGrad", lambda i, a: [(i[0].dtype, i[0].shape)], not_differentiable=True)
register_op("AvgPool3DGrad", _avg_grad_shape, grad=_avg_pool3d_grad_grad)


def _pool(op_type: str, input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
          data_format: str, name: str | None) -> Tensor:
    attrs = attrs3(op_type, strides, padding, data_format, ksize=ksize)
    with name_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype(op_type, x, FLOATS, "input")
        return make_tensor(op_type, [x], attrs, name=scope)


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
               data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """3-D max pooling (``tf.nn.max_pool3d``); ``ksize``/``strides`` are 1, 3 or 5 ints."""
    return _pool("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
               data_format: str = "NDHWC", name: str | None = None) -> Tensor:
    """3-D average pooling (``tf.nn.avg_pool3d``); with ``SAME`` padding each window averages
    only the input cells it covers, as TensorFlow's."""
    return _pool("AvgPool3D", input, ksize, strides, padding, data_format, name)

