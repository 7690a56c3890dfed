"""``LocallyConnected1D/2D``: convolutions whose filters are not shared across positions
(tf-keras's ``implementation=1``: kernel ``[positions, window * in_channels, filters]``,
bias ``[*output_positions, filters]``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, backend, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import set_window_options
from flowmesh.keras.layers.kernel_bias_options import set_kernel_bias_options


class _LocallyConnected(Layer):
    rank = 1

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, implementation: int = 1,
                 **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        set_window_options(self, filters, kernel_size, strides, padding, data_format)
        if implementation != 1 or self.padding != "valid":
            raise NotImplementedError(f"{type(self).__name__}: flowmesh implements implementation=1 with "
                                      f"padding='valid' (got implementation={implementation}, padding="
                                      f"{padding!r})")
        self.implementation = implementation
        self.use_bias = use_bias
        set_kernel_bias_options(self, activation, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        last = self.data_format == "channels_last"
        spatial = dims[1:-1] if last else dims[2:]
        channels = dims[-1] if last else dims[1]
        if None in spatial or channels is None:
            raise ValueError(f"The spatial dimensions of the inputs to a {type(self).__name__} layer should be "
                             f"fully-defined, but layer received the inputs shape {tuple(dims)}")
        self.output_dims = tuple((size - k) // s + 1 for size, k, s in zip(spatial, self.kernel_size, self.strides))
        if min(self.output_dims) <= 0:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Received input shape {tuple(dims)}")
        positions = 1
        for d in self.output_dims:
            positions *= d
        window = 1
        for k in self.kernel_size:
            window *= k
        self.kernel = self.add_weight("kernel", [positions, window * channels, self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", list(self.output_dims) + [self.filters],
                                        initializer=self.bias_initializer, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1 if last else 1: channels})
        self.built = True

    def call(self, inputs: Any) -> Any:
        from flowmesh.keras.backend_conv import local_conv

        out = local_conv(inputs, self.kernel, list(self.kernel_size), list(self.strides), self.output_dims,
                         self.data_format)
        if self.use_bias:
            out = backend.bias_add(out, self.bias, data_format=self.data_format)
        return self.activation(out)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "implementation": self.implementation}


class LocallyConnected1D(_LocallyConnected):
    """Unshared-weights 1-D convolution over ``[batch, steps, channels]``."""

    rank = 1


class LocallyConnected2D(_LocallyConnected):
    """Unshared-weights 2-D convolution over ``[batch, rows, cols, channels]``."""

    rank = 2
