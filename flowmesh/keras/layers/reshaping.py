"""``UpSampling1D/2D/3D``, ``RepeatVector``, ``Permute`` and ``TimeDistributed``."""

from __future__ import annotations

from typing import Any

from flowmesh.keras import backend
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import normalize_data_format, normalize_tuple
from flowmesh.ops import array_ops


class UpSampling1D(Layer):
    """Repeats each time step ``size`` times."""

    def __init__(self, size: int = 2, **kwargs: Any):
        super().__init__(**kwargs)
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: Any) -> Any:
        return backend.repeat_elements(inputs, self.size, axis=1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Scales rows and columns by ``size`` (``interpolation``: ``nearest`` repeats them,
    ``bilinear`` is TensorFlow 2's half-pixel bilinear resize)."""

    def __init__(self, size: Any = (2, 2), data_format: str | None = None, interpolation: str = "nearest",
                 **kwargs: Any):
        super().__init__(**kwargs)
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not supported by "
                                      "flowmesh; use 'nearest' or 'bilinear'")
        self.size = normalize_tuple(size, 2, "size")
        self.data_format = normalize_data_format(data_format)
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs: Any) -> Any:
        if self.interpolation == "bilinear":
            return backend.resize_images(inputs, self.size[0], self.size[1], self.data_format, "bilinear")
        x = inputs
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 2, 3, 1])
        _, h, w, c = x.shape.as_list()
        sh, sw = self.size
        if h is None or w is None or c is None:
            raise ValueError(f"Layer {self.name}: UpSampling2D needs known spatial and channel sizes, got "
                             f"{tuple(x.shape.as_list())}")
        x = array_ops.reshape(x, [-1, h, 1, w, 1, c])
        x = x * array_ops.ones([1, 1, sh, 1, sw, 1], dtype=x.dtype)
        x = array_ops.reshape(x, [-1, h * sh, w * sw, c])
        if self.data_format == "channels_first":
            x = array_ops.transpose(x, [0, 3, 1, 2])
        return x

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling3D(Layer):
    """Repeats the entries of the three spatial axes ``size`` times."""

    def __init__(self, size: Any = (2, 2, 2), data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, 3, "size")
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs: Any) -> Any:
        return backend.resize_volumes(inputs, *self.size, self.data_format)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


class RepeatVector(Layer):
    """``[batch, features]`` -> ``[batch, n, features]``."""

    def __init__(self, n: int, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs: Any) -> Any:
        return backend.repeat(inputs, self.n)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "n": self.n}


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` is a permutation of ``1..rank-1``."""

    def __init__(self, dims: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={dims}")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs: Any) -> Any:
        return array_ops.transpose(inputs, [0, *self.dims])

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "dims": self.dims}


class Wrapper(Layer):
    """Base class of layers that wrap another layer (``self.layer``); its config carries the
    wrapped layer's."""

    def __init__(self, layer: Layer, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a `tf.keras.layers.Layer` "
                             f"instance. Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self) -> dict[str, Any]:
        from flowmesh.keras.saving.model_config import layer_config

        return {**super().get_config(), "layer": layer_config(self.layer)}

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict | None = None) -> Wrapper:
        from flowmesh.keras.saving.model_config import layer_from_config

        config = dict(config)
        return cls(layer_from_config(config.pop("layer"), custom_objects), **config)


class TimeDistributed(Layer):
    """Applies ``layer`` to every time step of ``[batch, time, ...]`` (the batch and time axes
    are merged, the layer is called once, and the result is split again)."""

    def __init__(self, layer: Layer, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `tf.keras.layers.Layer` "
                             f"instance. Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any) -> None:
        if input_shape.rank is None or input_shape.rank < 3:
            raise ValueError(f"`TimeDistributed` ({self.name}) needs an input of at least rank 3 "
                             f"[batch, time, ...], got shape {input_shape}")
        if not self.layer.built:
            # Built here, in this layer's name scope: weights are time_distributed/kernel, as in Keras.
            from flowmesh.core.shapes import TensorShape

            self.layer.build(TensorShape([None]).concatenate(input_shape[2:]))
            self.layer.built = True
        self.built = True

    def _inner(self, inputs: Any) -> Any:
        dims = inputs.shape.as_list()
        return array_ops.reshape(inputs, [-1] + [d if d is not None else -1 for d in dims[2:]])

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        dims = inputs.shape.as_list()
        inner = self._inner(inputs)
        kwargs = {"training": training} if training is not None and self.layer._expects_training else {}
        if mask is not None and self.layer._expects_mask:
            kwargs["mask"] = array_ops.reshape(mask, array_ops.concat([[-1], array_ops.shape(mask)[2:]], 0))
        y = self.layer(inner, **kwargs)
        out_dims = y.shape.as_list()[1:]
        time = dims[1] if dims[1] is not None else array_ops.shape(inputs)[1]
        if isinstance(time, int) and all(d is not None for d in out_dims):
            out = array_ops.reshape(y, [-1, time] + out_dims)
        else:
            out = array_ops.reshape(y, array_ops.concat([[-1], array_ops.reshape(time, [1]),
                                                         array_ops.shape(y)[1:]], 0))
        return out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        from flowmesh.keras.layers.masking import time_distributed_mask

        return time_distributed_mask(self.layer, inputs, self._inner(inputs), mask)

    def get_config(self) -> dict[str, Any]:
        from flowmesh.keras.saving.model_config import layer_config

        return {**super().get_config(), "layer": layer_config(self.layer)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TimeDistributed:
        from flowmesh.keras.saving.model_config import layer_from_config

        config = dict(config)
        return cls(layer_from_config(config.pop("layer")), **config)
