"""Depthwise and separable convolutions: ``DepthwiseConv2dNative`` (TensorFlow's op type),
``tf.nn.depthwise_conv2d``, ``depthwise_conv2d_native``, ``separable_conv2d``.

A depthwise filter ``[h, w, C, M]`` convolves every input channel ``c`` with its own ``M``
filters into output channels ``c * M + m``: the grouped ``Conv2D`` (``C`` groups) with the
filter reshaped to ``[h, w, 1, C * M]``. The kernel runs that grouped convolution; the
gradients are the grouped ``Conv2DBackpropInput`` / ``Conv2DBackpropFilter`` on the reshaped
filter, so second-order gradients come from theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_tensor
from flowmesh.ops.nn_conv_ops import _conv_attr_subset, _conv_output_shape, channel_dim, conv2d, conv_attrs


def grouped_filter_shape(f_shape: TensorShape) -> TensorShape:
    """``[h, w, C, M]`` -> ``[h, w, 1, C * M]`` (unknown where the input is)."""
    if f_shape.rank is None:
        return TensorShape([None, None, 1, None])
    h, w, c, m = f_shape.as_list()
    return TensorShape([h, w, 1, None if c is None or m is None else c * m])


def _grouped_filter(f: Tensor) -> Tensor:
    shape = array_ops.shape(f)
    return array_ops.reshape(f, array_ops.concat([shape[:2], [1], shape[2:3] * shape[3:4]], 0))


def _depthwise_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, f = inputs
    if x.dtype != f.dtype:
        raise TypeError(f"DepthwiseConv2dNative input ({x.dtype.name}) and filter ({f.dtype.name}) dtypes differ")
    if f.shape.rank not in (None, 4) or x.shape.rank not in (None, 4):
        raise InvalidArgumentError(f"DepthwiseConv2dNative needs a 4-D input and a 4-D filter [h, w, in, "
                                   f"multiplier], got {x.shape} and {f.shape}")
    channels = x.shape.as_list()[channel_dim(attrs["data_format"])] if x.shape.rank == 4 else None
    f_in = f.shape.as_list()[2] if f.shape.rank == 4 else None
    if channels is not None and f_in is not None and channels != f_in:
        raise InvalidArgumentError(f"DepthwiseConv2dNative: input depth {channels} must equal the filter's "
                                   f"in_channels {f_in} (filter shape {f.shape})")
    return [(x.dtype, _conv_output_shape(x.shape, grouped_filter_shape(f.shape), attrs))]


def _depthwise_grad(op: Any, grad: Tensor) -> list:
    x, f = op.inputs
    attrs = _conv_attr_subset(op.attrs)
    grouped = _grouped_filter(f)
    dx = make_tensor("Conv2DBackpropInput", [array_ops.shape(x), grouped, grad], attrs)
    df = make_tensor("Conv2DBackpropFilter", [x, array_ops.shape(grouped), grad], attrs)
    return [dx, array_ops.reshape(df, array_ops.shape(f))]


register_op("DepthwiseConv2dNative", _depthwise_shape, grad=_depthwise_grad)


def depthwise_conv2d_native(input: Any, filter: Any, strides: Any, padding: Any,  # noqa: A002
                            data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """Depthwise 2-D convolution (``tf.nn.depthwise_conv2d_native``).

    Args:
        input: ``[batch, height, width, C]`` (NHWC) or ``[batch, C, height, width]`` (NCHW).
        filter: ``[filter_height, filter_width, C, channel_multiplier]``.
        strides, padding, data_format, dilations: as ``tf.nn.conv2d``.

    Returns:
        ``C * channel_multiplier`` output channels (channel ``c * M + m``).

    Raises:
        InvalidArgumentError: the filter's in_channels differ from the input's depth, or bad
            strides/padding; TypeError: dtypes differ or are not floating.
    """
    attrs = conv_attrs(strides, padding, data_format, dilations, "DepthwiseConv2dNative")
    with name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        x = convert_to_tensor(input, name="input")
        f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
        check_dtype("DepthwiseConv2dNative", x, FLOATS, "input")
        return make_tensor("DepthwiseConv2dNative", [x, f], attrs, name=scope)


def _rate_dilations(rate: Any, dilations: Any) -> Any:
    if rate is None:
        return dilations
    rate = [int(r) for r in (rate if isinstance(rate, (list, tuple)) else [rate, rate])]
    return [1, *rate, 1]


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any, rate: Any = None,  # noqa: A002
                     name: str | None = None, data_format: str | None = None, dilations: Any = None) -> Tensor:
    """``tf.nn.depthwise_conv2d``: ``depthwise_conv2d_native`` with ``rate`` as dilations.

    Raises:
        InvalidArgumentError: as :func:`depthwise_conv2d_native`.
    """
    fmt = data_format or "NHWC"
    dil = _rate_dilations(rate, dilations)
    if fmt == "NCHW" and rate is not None:
        dil = [1, 1, *dil[1:3]]
    with name_scope(name, "depthwise", [input, filter]) as scope:
        return depthwise_conv2d_native(input, filter, strides, padding, fmt, dil, name=scope)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: Any, rate: Any = None, name: str | None = None, data_format: str | None = None,
                     dilations: Any = None) -> Tensor:
    """``tf.nn.separable_conv2d``: a depthwise convolution, then a 1x1 ``pointwise_filter``
    ``[1, 1, C * multiplier, out_channels]`` convolution.

    Raises:
        InvalidArgumentError: the pointwise filter is not 1x1 or its in_channels differ.
    """
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        pointwise = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        if pointwise.shape.rank == 4 and pointwise.shape.as_list()[:2] not in ([1, 1], [None, None]):
            raise InvalidArgumentError(f"separable_conv2d: pointwise_filter must be [1, 1, in, out], got "
                                       f"{pointwise.shape}")
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate, name="depthwise",
                                     data_format=data_format, dilations=dilations)
        return conv2d(depthwise, pointwise, [1, 1, 1, 1], "VALID", data_format=data_format or "NHWC",
                      name=scope)
