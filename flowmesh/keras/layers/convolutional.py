"""Convolution layers: ``Conv1D``, ``Conv2D``, ``Conv3D``, ``Conv2DTranspose`` (channels_last
or channels_first; kernels ``[k..., in, filters]``, transpose ``[kh, kw, filters, in]``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, backend, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.kernel_bias_options import set_kernel_bias_options
from flowmesh.ops import array_ops, manip_ops, nn_conv_ops, nn_ops


def normalize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``3`` -> ``(3, 3)``; a sequence must have ``n`` ints."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    return value


def normalize_padding(value: str) -> str:
    padding = str(value).lower()
    if padding not in ("valid", "same", "causal"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same' (or 'causal'). "
                         f"Received: {value}")
    return padding


def normalize_data_format(value: str | None) -> str:
    fmt = (value or "channels_last").lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', 'channels_last'. "
                         f"Received: {value}")
    return fmt


def set_window_options(layer: Any, filters: int, kernel_size: Any, strides: Any, padding: str,
                       data_format: str | None) -> None:
    """Checks a convolution-like layer's window arguments and sets them on ``layer``:
    ``filters``, ``kernel_size`` and ``strides`` (tuples of ``layer.rank`` ints), ``padding``
    and ``data_format`` (lower case).

    Raises:
        ValueError: a size or stride of the wrong length, an unknown padding or data format.
    """
    layer.filters = int(filters)
    layer.kernel_size = normalize_tuple(kernel_size, layer.rank, "kernel_size")
    layer.strides = normalize_tuple(strides, layer.rank, "strides")
    layer.padding = normalize_padding(padding)
    layer.data_format = normalize_data_format(data_format)


def deconv_output_length(size: int | None, k: int, padding: str, stride: int, dilation: int = 1,
                         output_padding: int | None = None) -> int | None:
    """The spatial size a transposed convolution produces (Keras's ``deconv_output_length``)."""
    if size is None:
        return None
    k = k + (k - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride + max(k - stride, 0) if padding == "valid" else size * stride
    pad = k // 2 if padding == "same" else 0
    return (size - 1) * stride + k - 2 * pad + output_padding


class Conv(Layer):
    """N-D convolution (N = 1, 2 or 3) with bias and activation."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, groups: int = 1,
                 activation: Any = None, use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        set_window_options(self, filters, kernel_size, strides, padding, data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.groups = int(groups or 1)
        if self.filters % self.groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. "
                             f"Received: groups={self.groups}, filters={self.filters}")
        self.use_bias = use_bias
        set_kernel_bias_options(self, activation, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    @property
    def _channel_axis(self) -> int:
        return -1 if self.data_format == "channels_last" else 1

    def _kernel_shape(self, channels: int) -> list[int]:
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of "
                             f"groups. Received groups={self.groups}, but the input has {channels} channels")
        return list(self.kernel_size) + [channels // self.groups, self.filters]

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape)
        if shape.rank != self.rank + 2:
            raise ValueError(f"expected input of rank {self.rank + 2}, got shape {shape}")
        channels = shape[self._channel_axis]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.kernel = self.add_weight("kernel", self._kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _convolve(self, inputs: Any) -> Any:
        fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
        if self.rank == 3:
            if self.groups > 1:
                raise ValueError(f"Layer {self.name}: grouped 3-D convolutions (groups={self.groups}) are "
                                 f"not supported; use groups=1")
            return backend.conv3d(inputs, self.kernel, self.strides, self.padding, self.data_format,
                                  self.dilation_rate)
        if self.rank == 1:
            padding = self.padding.upper()
            if padding == "CAUSAL":  # left-pad by the dilated kernel's reach, then VALID (tf-keras)
                left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
                pads = [[0, 0], [left, 0], [0, 0]] if fmt == "NHWC" else [[0, 0], [0, 0], [left, 0]]
                inputs, padding = manip_ops.pad(inputs, pads), "VALID"
            return nn_conv_ops.conv1d(inputs, self.kernel, self.strides[0], padding,
                                      data_format="NWC" if fmt == "NHWC" else "NCW",
                                      dilations=self.dilation_rate[0])
        return nn_conv_ops.conv2d(inputs, self.kernel, list(self.strides), self.padding.upper(),
                                  data_format=fmt, dilations=list(self.dilation_rate))

    def call(self, inputs: Any) -> Any:
        outputs = self._convolve(inputs)
        if self.use_bias:
            fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
            if self.rank != 2 and fmt == "NCHW":
                outputs = outputs + array_ops.reshape(self.bias, [1, self.filters] + [1] * self.rank)
            else:
                outputs = nn_ops.bias_add(outputs, self.bias, data_format=fmt)
        if self.activation is not activations.linear:
            return self.activation(outputs)
        return outputs

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides,
                      padding=self.padding, data_format=self.data_format,
                      dilation_rate=self.dilation_rate, groups=self.groups,
                      activation=activations.serialize(self.activation), use_bias=self.use_bias,
                      kernel_initializer=initializers.serialize(self.kernel_initializer),
                      bias_initializer=initializers.serialize(self.bias_initializer),
                      kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
                      bias_regularizer=regularizers.serialize(self.bias_regularizer),
                      activity_regularizer=regularizers.serialize(self._activity_regularizer),
                      kernel_constraint=constraints.serialize(self.kernel_constraint),
                      bias_constraint=constraints.serialize(self.bias_constraint))
        return config


class Conv1D(Conv):
    """1-D convolution over ``[batch, steps, channels]``."""

    rank = 1


class Conv2D(Conv):
    """2-D convolution over ``[batch, rows, cols, channels]``."""

    rank = 2


class Conv3D(Conv):
    """3-D convolution over ``[batch, depth, rows, cols, channels]``."""

    rank = 3


class Conv2DTranspose(Conv):
    """Transposed 2-D convolution; kernel ``[kh, kw, filters, in_channels]``."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 output_padding: Any = None, **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)
        self.output_padding = None if output_padding is None else normalize_tuple(output_padding, 2,
                                                                                  "output_padding")

    def _kernel_shape(self, channels: int) -> list[int]:
        return list(self.kernel_size) + [self.filters, channels]

    def _convolve(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        h_axis, w_axis = (2, 3) if first else (1, 2)
        dynamic = array_ops.shape(inputs)
        static = inputs.shape.as_list()
        pads = self.output_padding or (None, None)
        sizes = []
        for i, axis in enumerate((h_axis, w_axis)):
            size = static[axis]
            out = deconv_output_length(size, self.kernel_size[i], self.padding, self.strides[i],
                                       self.dilation_rate[i], pads[i])
            if out is None:
                raise ValueError(f"Layer {self.name}: the spatial dimensions of the input must be known, "
                                 f"got shape {tuple(static)}")
            sizes.append(out)
        dims = [dynamic[0], self.filters, *sizes] if first else [dynamic[0], *sizes, self.filters]
        out_shape = array_ops.stack(dims)
        outputs = nn_conv_ops.conv2d_transpose(inputs, self.kernel, out_shape, list(self.strides),
                                               self.padding.upper(),
                                               data_format="NCHW" if first else "NHWC",
                                               dilations=list(self.dilation_rate))
        static_out = [static[0], self.filters, *sizes] if first else [static[0], *sizes, self.filters]
        outputs.set_shape(static_out)
        return outputs

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "output_padding": self.output_padding}
