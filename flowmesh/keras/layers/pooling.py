"""Pooling layers: ``MaxPooling1D/2D/3D``, ``AveragePooling1D/2D/3D``,
``GlobalAveragePooling1D/2D/3D``, ``GlobalMaxPooling1D/2D/3D``."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import normalize_data_format, normalize_padding, normalize_tuple
from flowmesh.ops import array_ops, nn_conv_ops
from flowmesh.ops.reduction_ops import reduce_max, reduce_mean


class Pooling(Layer):
    """Windowed max or average over ``rank`` spatial dimensions (strides default to the
    pool size, as in Keras)."""

    rank = 2
    op = "max"

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides if strides is not None else pool_size, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs: Any) -> Any:
        pool = nn_conv_ops.max_pool if self.op == "max" else nn_conv_ops.avg_pool
        last = self.data_format == "channels_last"
        if self.rank == 3:
            from flowmesh.ops import nn_pool3d_ops

            pool3d = nn_pool3d_ops.max_pool3d if self.op == "max" else nn_pool3d_ops.avg_pool3d
            return pool3d(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                          data_format="NDHWC" if last else "NCDHW")
        if self.rank == 1:
            axis = 2 if last else 3
            x = array_ops.expand_dims(inputs, axis)
            ksize, strides = [self.pool_size[0], 1], [self.strides[0], 1]
            y = pool(x, ksize, strides, self.padding.upper(), data_format="NHWC" if last else "NCHW")
            return array_ops.squeeze(y, [axis])
        return pool(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                    data_format="NHWC" if last else "NCHW")

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling1D(Pooling):
    rank, op = 1, "max"


class MaxPooling2D(Pooling):
    rank, op = 2, "max"


class MaxPooling3D(Pooling):
    rank, op = 3, "max"


class AveragePooling1D(Pooling):
    rank, op = 1, "avg"


class AveragePooling2D(Pooling):
    rank, op = 2, "avg"


class AveragePooling3D(Pooling):
    rank, op = 3, "avg"


class GlobalPooling(Layer):
    """Mean or max over all spatial dimensions."""

    rank = 2
    op = "avg"

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs: Any) -> Any:
        axes = list(range(1, self.rank + 1)) if self.data_format == "channels_last" else \
            list(range(2, self.rank + 2))
        reduce = reduce_mean if self.op == "avg" else reduce_max
        return reduce(inputs, axis=axes, keepdims=self.keepdims)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling1D(GlobalPooling):
    """Mean over time; with a mask, the mean over the unmasked steps only."""

    rank, op = 1, "avg"

    def __init__(self, data_format: str | None = None, **kwargs: Any):
        super().__init__(data_format=data_format, **kwargs)
        self.supports_masking = True

    def call(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None:
            return super().call(inputs)
        from flowmesh.ops import array_ops, cast_ops
        from flowmesh.ops.reduction_ops import reduce_sum

        steps = 1 if self.data_format == "channels_last" else 2
        weights = cast_ops.cast(mask, inputs.dtype)
        weights = array_ops.expand_dims(weights, 2 if steps == 1 else 1)
        total = reduce_sum(inputs * weights, axis=steps, keepdims=self.keepdims)
        return total / reduce_sum(weights, axis=steps, keepdims=self.keepdims)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None


class GlobalAveragePooling2D(GlobalPooling):
    rank, op = 2, "avg"


class GlobalMaxPooling1D(GlobalPooling):
    rank, op = 1, "max"


class GlobalMaxPooling2D(GlobalPooling):
    rank, op = 2, "max"


class GlobalAveragePooling3D(GlobalPooling):
    rank, op = 3, "avg"


class GlobalMaxPooling3D(GlobalPooling):
    rank, op = 3, "max"
