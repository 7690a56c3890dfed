"""Transposed convolutions over 1 and 3 spatial axes: ``Conv1DTranspose``,
``Conv3DTranspose`` (kernels ``[k..., filters, in_channels]``, as tf-keras)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.layers.convolutional import Conv, deconv_output_length, normalize_tuple
from flowmesh.ops import array_ops


class _ConvTranspose(Conv):
    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 output_padding: Any = None, **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)
        self.output_padding = None if output_padding is None else normalize_tuple(output_padding, self.rank,
                                                                                  "output_padding")
        if self.output_padding is not None:
            for pad, stride in zip(self.output_padding, self.strides):
                if pad >= stride:
                    raise ValueError(f"Strides {self.strides} must be greater than output padding "
                                     f"{self.output_padding}. Received strides={self.strides}")

    def _kernel_shape(self, channels: int) -> list[int]:
        return list(self.kernel_size) + [self.filters, channels]

    def _output_dims(self, inputs: Any) -> tuple[list[Any], list[int]]:
        first = self.data_format == "channels_first"
        static = inputs.shape.as_list()
        axes = range(2, self.rank + 2) if first else range(1, self.rank + 1)
        pads = self.output_padding or (None,) * self.rank
        sizes = []
        for i, axis in enumerate(axes):
            out = deconv_output_length(static[axis], self.kernel_size[i], self.padding, self.strides[i],
                                       self.dilation_rate[i], pads[i])
            if out is None:
                raise ValueError(f"Layer {self.name}: the spatial dimensions of the input must be known, "
                                 f"got shape {tuple(static)}")
            sizes.append(out)
        batch = array_ops.shape(inputs)[0]
        dims = [batch, self.filters, *sizes] if first else [batch, *sizes, self.filters]
        return dims, sizes

    def _static(self, inputs: Any, sizes: list[int]) -> list[Any]:
        batch = inputs.shape.as_list()[0]
        return [batch, self.filters, *sizes] if self.data_format == "channels_first" else [batch, *sizes, self.filters]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "output_padding": self.output_padding}


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution over ``[batch, steps, channels]``."""

    rank = 1

    def _convolve(self, inputs: Any) -> Any:
        from flowmesh.ops.nn_compositions import conv1d_transpose

        dims, sizes = self._output_dims(inputs)
        first = self.data_format == "channels_first"
        outputs = conv1d_transpose(inputs, self.kernel, array_ops.stack(dims), self.strides[0],
                                   padding=self.padding.upper(), data_format="NCW" if first else "NWC",
                                   dilations=self.dilation_rate[0])
        outputs.set_shape(self._static(inputs, sizes))
        return outputs


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution over ``[batch, depth, rows, cols, channels]`` (no
    ``dilation_rate``: tf-keras's config leaves it out)."""

    rank = 3

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
                 output_padding: Any = None, data_format: str | None = None, dilation_rate: Any = (1, 1, 1),
                 **kwargs: Any):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in super().get_config().items() if k != "dilation_rate"}

    def _convolve(self, inputs: Any) -> Any:
        from flowmesh.ops.nn_conv3d_ops import conv3d_transpose

        dims, sizes = self._output_dims(inputs)
        first = self.data_format == "channels_first"
        strides = [1, 1, *self.strides] if first else [1, *self.strides, 1]
        outputs = conv3d_transpose(inputs, self.kernel, array_ops.stack(dims), strides,
                                   padding=self.padding.upper(), data_format="NCDHW" if first else "NDHWC")
        outputs.set_shape(self._static(inputs, sizes))
        return outputs
