"""Depthwise and separable convolutions: ``DepthwiseConv1D/2D`` (one filter bank per input
channel, ``depthwise_kernel [k..., in, depth_multiplier]``) and ``SeparableConv1D/2D`` (a
depthwise convolution, then a 1x1 ``pointwise_kernel [1..., in * multiplier, filters]``).
The 1-D forms run the 2-D ops on an added axis, as tf-keras does."""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, constraints, initializers, regularizers
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import Conv
from flowmesh.ops import array_ops, manip_ops, nn_ops
from flowmesh.ops.depthwise_conv_ops import depthwise_conv2d, separable_conv2d


class _Depthwise(Conv):
    """Common parts: the depthwise kernel, the 1-D to 2-D lift, bias and activation."""

    def __init__(self, filters: int, kernel_size: Any, depth_multiplier: int = 1,
                 depthwise_initializer: Any = "glorot_uniform", depthwise_regularizer: Any = None,
                 depthwise_constraint: Any = None, **kwargs: Any):
        super().__init__(filters, kernel_size, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def _channels(self, input_shape: Any) -> int:
        shape = TensorShape(input_shape)
        channels = shape[self._channel_axis] if shape.rank == self.rank + 2 else None
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to `{type(self).__name__}` should be defined. "
                             f"The input_shape received is {shape}")
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        return int(channels)

    def _bias(self, size: int) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [size], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _lift(self, inputs: Any) -> tuple[Any, int, list[int], list[int], str]:
        """Inputs with a size-1 axis added for 1-D, the axis, 2-D strides and dilations, format."""
        first = self.data_format == "channels_first"
        fmt = "NCHW" if first else "NHWC"
        if self.rank == 1:
            axis = 2 if first else 1
            if self.padding == "causal":
                left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
                pads = [[0, 0], [0, 0], [left, 0]] if first else [[0, 0], [left, 0], [0, 0]]
                inputs = manip_ops.pad(inputs, pads)
            strides = [1, 1, self.strides[0], self.strides[0]] if first else [1, self.strides[0], self.strides[0], 1]
            return array_ops.expand_dims(inputs, axis), axis, strides, [1, self.dilation_rate[0]], fmt
        strides = [1, 1, *self.strides] if first else [1, *self.strides, 1]
        return inputs, -1, strides, list(self.dilation_rate), fmt

    def _finish(self, outputs: Any, axis: int, fmt: str) -> Any:
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=fmt)
        if axis >= 0:
            outputs = array_ops.squeeze(outputs, [axis])
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def _op_padding(self) -> str:
        return "VALID" if self.padding == "causal" else self.padding.upper()

    def _depthwise_config(self) -> dict[str, Any]:
        return {"depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
                "depthwise_constraint": constraints.serialize(self.depthwise_constraint)}


class DepthwiseConv2D(_Depthwise):
    """Depthwise 2-D convolution: output channels ``in * depth_multiplier``."""

    rank = 2

    def __init__(self, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid", depth_multiplier: int = 1,
                 data_format: str | None = None, dilation_rate: Any = (1, 1), activation: Any = None,
                 use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any):
        super().__init__(1, kernel_size, depth_multiplier, depthwise_initializer, depthwise_regularizer,
                         depthwise_constraint, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint, **kwargs)

    def build(self, input_shape: Any) -> None:
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self._bias(channels * self.depth_multiplier)
        self.built = True

    def call(self, inputs: Any) -> Any:
        x, axis, strides, dilations, fmt = self._lift(inputs)
        kernel = array_ops.expand_dims(self.depthwise_kernel, 0) if self.rank == 1 else self.depthwise_kernel
        outputs = depthwise_conv2d(x, kernel, strides, self._op_padding(), rate=dilations, data_format=fmt)
        return self._finish(outputs, axis, fmt)

    def get_config(self) -> dict[str, Any]:
        config = {k: v for k, v in super().get_config().items()
                  if k not in ("filters", "kernel_initializer", "kernel_regularizer", "kernel_constraint")}
        return {**config, **self._depthwise_config()}


class DepthwiseConv1D(DepthwiseConv2D):
    """Depthwise 1-D convolution over ``[batch, steps, channels]``."""

    rank = 1

    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid", depth_multiplier: int = 1,
                 data_format: str | None = None, dilation_rate: Any = 1, **kwargs: Any):
        super().__init__(kernel_size, strides=strides, padding=padding, depth_multiplier=depth_multiplier,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)


class SeparableConv2D(_Depthwise):
    """A depthwise 2-D convolution followed by a 1x1 convolution to ``filters`` channels."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                 activation: Any = None, use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None, pointwise_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(filters, kernel_size, depth_multiplier, depthwise_initializer, depthwise_regularizer,
                         depthwise_constraint, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint, **kwargs)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape: Any) -> None:
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1] * self.rank + [channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._bias(self.filters)
        self.built = True

    def call(self, inputs: Any) -> Any:
        x, axis, strides, dilations, fmt = self._lift(inputs)
        depthwise, pointwise = self.depthwise_kernel, self.pointwise_kernel
        if self.rank == 1:
            depthwise, pointwise = array_ops.expand_dims(depthwise, 0), array_ops.expand_dims(pointwise, 0)
        outputs = separable_conv2d(x, depthwise, pointwise, strides, self._op_padding(), rate=dilations,
                                   data_format=fmt)
        return self._finish(outputs, axis, fmt)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._depthwise_config(),
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "pointwise_constraint": constraints.serialize(self.pointwise_constraint)}


class SeparableConv1D(SeparableConv2D):
    """A depthwise 1-D convolution followed by a pointwise one to ``filters`` channels."""

    rank = 1

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)
