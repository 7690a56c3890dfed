"""3-D convolution and pooling: ``Conv3D``, ``Conv3DBackpropInputV2``,
``Conv3DBackpropFilterV2``, ``MaxPool3D`` (+ ``MaxPool3DGrad``), ``AvgPool3D`` (+
``AvgPool3DGrad``), with TensorFlow's ``SAME``/``VALID`` padding and ``NDHWC``/``NCDHW``
layouts; kernels in ``kernels/nn_conv3d_ops.py``. Gradients are the backprop ops (and the
convolution for the backprops' own gradients), so second order works for the convolution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import FLOATS, check_dtype, constant_value, make_tensor
from flowmesh.ops.nn_conv_ops import conv_geometry

FORMATS = ("NDHWC", "NCDHW")


def spatial3(data_format: str) -> tuple[int, int, int]:
    """Indices of depth, height and width in a 5-D tensor of ``data_format``."""
    return (1, 2, 3) if data_format == "NDHWC" else (2, 3, 4)


def _five(value: Any, arg: str, fmt: str, op_type: str) -> list[int]:
    values = [int(v) for v in ([value] if isinstance(value, int) else list(value))]
    if len(values) in (1, 3):
        spatial = values * 3 if len(values) == 1 else values
        values = [1] * 5
        for d, v in zip(spatial3(fmt), spatial):
            values[d] = v
    if len(values) != 5 or min(values) < 1:
        raise InvalidArgumentError(f"{op_type}: {arg} must be an int or a list of 1, 3 or 5 "
                                   f"positive ints, got {value}")
    if values[0] != 1 or values[1 if fmt == "NCDHW" else 4] != 1:
        raise InvalidArgumentError(f"{op_type}: {arg} must be 1 in the batch and channel "
                                   f"dimensions, got {values}")
    return values


def attrs3(op_type: str, strides: Any, padding: Any, data_format: Any, dilations: Any = None,
           ksize: Any = None) -> dict[str, Any]:
    """Validated attrs of a 3-D convolution (``dilations``) or pooling (``ksize``) op."""
    fmt = data_format or "NDHWC"
    if fmt not in FORMATS:
        raise InvalidArgumentError(f"{op_type}: data_format must be NDHWC or NCDHW, got {fmt!r}")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{op_type}: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"strides": _five(strides, "strides", fmt, op_type), "padding": padding,
             "data_format": fmt}
    if ksize is not None:
        attrs["ksize"] = _five(ksize, "ksize", fmt, op_type)
    else:
        attrs["dilations"] = _five(dilations if dilations is not None else 1, "dilations", fmt,
                                   op_type)
    return attrs


def output_shape3(op_type: str, x: TensorShape, window: Sequence[int | None], out_channels: Any,
                  attrs: dict[str, Any]) -> TensorShape:
    """The 5-D output shape for input shape ``x`` and spatial ``window``."""
    if x.rank is not None and x.rank != 5:
        raise InvalidArgumentError(f"{op_type}: input must be 5-D, got shape {x}")
    dims = x.as_list() if x.rank is not None else [None] * 5
    fmt, out = attrs["data_format"], list(dims)
    dilations = attrs.get("dilations") or [1] * 5
    for d, k in zip(spatial3(fmt), window):
        if dims[d] is None or k is None:
            out[d] = None
            continue
        size = conv_geometry(dims[d], k, attrs["strides"][d], dilations[d], attrs["padding"])[0]
        if size <= 0:
            raise InvalidArgumentError(f"{op_type}: computed output size would be {size} for input "
                                       f"shape {x} and window {list(window)}")
        out[d] = size
    out[4 if fmt == "NDHWC" else 1] = out_channels
    return TensorShape(out)


def _filter_dims(f: TensorShape) -> list[int | None]:
    if f.rank is not None and f.rank != 5:
        raise InvalidArgumentError(f"Conv3D: filter must be 5-D [depth, height, width, in, out], "
                                   f"got shape {f}")
    return f.as_list() if f.rank is not None else [None] * 5


def _conv3d_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    fd = _filter_dims(inputs[1].shape)
    return [(inputs[0].dtype, output_shape3("Conv3D", inputs[0].shape, fd[:3], fd[4], attrs))]


def _sizes_shape(index: int, value: int):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        sizes = constant_value(inputs[index])
        shape = TensorShape([int(s) for s in sizes]) if sizes is not None else TensorShape([None] * 5)
        return [(inputs[value].dtype, shape)]
    return shape_fn


def _conv_attrs(op: Any) -> dict[str, Any]:
    return {k: op.attrs[k] for k in ("strides", "padding", "data_format", "dilations")}


def _conv3d_grad(op: Any, grad: Tensor) -> list:
    x, f = op.inputs
    attrs = _conv_attrs(op)
    return [make_tensor("Conv3DBackpropInputV2", [array_ops.shape(x), f, grad], attrs),
            make_tensor("Conv3DBackpropFilterV2", [x, array_ops.shape(f), grad], attrs)]


def _input_grad_grad(op: Any, grad: Tensor) -> list:
    _, f, g = op.inputs
    attrs = _conv_attrs(op)
    return [None, make_tensor("Conv3DBackpropFilterV2", [grad, array_ops.shape(f), g], attrs),
            make_tensor("Conv3D", [grad, f], attrs)]


def _filter_grad_grad(op: Any, grad: Tensor) -> list:
    x, _, g = op.inputs
    attrs = _conv_attrs(op)
    return [make_tensor("Conv3DBackpropInputV2", [array_ops.shape(x), grad, g], attrs), None,
            make_tensor("Conv3D", [x, grad], attrs)]


register_op("Conv3D", _conv3d_shape, grad=_conv3d_grad)
register_op("Conv3DBackpropInputV2", _sizes_shape(0, 2), grad=_input_grad_grad)
register_op("Conv3DBackpropFilterV2", _sizes_shape(1, 0), grad=_filter_grad_grad)


def conv3d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002
           data_format: str = "NDHWC", dilations: Any = (1, 1, 1, 1, 1), name: str | None = None,
           filters: Any = None) -> Tensor:
    """3-D convolution of ``[batch, depth, height, width, in]`` (NDHWC) with a
    ``[d, h, w, in, out]`` filter (``tf.nn.conv3d``); ``strides``/``dilations`` are 5 ints
    (batch and channel 1), ``padding`` ``"SAME"`` or ``"VALID"``."""
    filter = filters if filter is None else filter  # noqa: A001
    attrs = attrs3("Conv3D", strides, padding, data_format, dilations)
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype("Conv3D", x, FLOATS, "input")
        f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
        return make_tensor("Conv3D", [x, f], attrs, name=scope)


def conv3d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                           strides: Any, padding: Any, data_format: str = "NDHWC",
                           dilations: Any = (1, 1, 1, 1, 1), name: str | None = None) -> Tensor:
    """The gradient of :func:`conv3d` with respect to its filter, of shape ``filter_sizes``
    (``tf.nn.conv3d_backprop_filter`` / ``_v2``)."""
    attrs = attrs3("Conv3DBackpropFilterV2", strides, padding, data_format, dilations)
    x = convert_to_tensor(input, name="input")
    g = convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop")
    sizes = convert_to_tensor(filter_sizes, dtype=dtypes.int32, name="filter_sizes")
    return make_tensor("Conv3DBackpropFilterV2", [x, sizes, g], attrs,
                       name=name or "Conv3DBackpropFilterV2")


def conv3d_transpose(value: Any, filter: Any = None, output_shape: Any = None,  # noqa: A002
                     strides: Any = None, padding: str = "SAME", data_format: str = "NDHWC",
                     name: str | None = None, filters: Any = None, dilations: Any = None) -> Tensor:
    """The transpose of :func:`conv3d` (its input gradient) producing ``output_shape``
    (``tf.nn.conv3d_transpose``); the filter is ``[d, h, w, out, in]``."""
    filter = filters if filter is None else filter  # noqa: A001
    attrs = attrs3("Conv3DBackpropInputV2", strides, padding, data_format, dilations)
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        g = convert_to_tensor(value, name="value")
        f = convert_to_tensor(filter, dtype=g.dtype, name="filter")
        sizes = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        return make_tensor("Conv3DBackpropInputV2", [sizes, f, g], attrs, name=scope)
