"""Preprocessing layers: ``Normalization`` (with ``adapt``), ``Rescaling``, ``Resizing``,
``CenterCrop``, ``Hashing``, ``CategoryEncoding``, ``Discretization`` (tf-keras's
definitions; ``adapt`` reads NumPy data or a tensor's value)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.keras import backend
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops


def _values(data: Any) -> np.ndarray:
    """``adapt``'s data as a NumPy array (a tensor is evaluated in the Keras session)."""
    if hasattr(data, "op") or hasattr(data, "graph"):
        return np.asarray(backend.get_value(data))
    if hasattr(data, "make_one_shot_iterator") or hasattr(data, "element_spec"):
        raise TypeError("flowmesh's adapt() takes NumPy data or a tensor; pass np.concatenate(list of batches)")
    return np.asarray(data)


class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), epsilon)`` per entry of the kept ``axis``; mean and
    variance given, or learned by :meth:`adapt` (weights ``mean``, ``variance``, ``count``).
    ``invert=True`` maps normalized values back."""

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. Got mean: "
                             f"{mean} and variance: {variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        ndim = len(dims)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Found ndim: `{ndim}`, "
                             f"axis: {self.axis}")
        self._keep_axis = sorted(d % ndim for d in self.axis)
        if any(dims[d] is None for d in self._keep_axis):
            raise ValueError(f"All `axis` values to be kept must have known shape. Got axis: {self.axis}, "
                             f"input shape: {dims}")
        self._reduce_axis = [d for d in range(ndim) if d not in self._keep_axis]
        self._broadcast_shape = [dims[d] if d in self._keep_axis else 1 for d in range(ndim)]
        shape = [dims[d] for d in self._keep_axis]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight("variance", shape, initializer="ones", trainable=False)
            self.count = self.add_weight("count", [], dtype=dtypes.int64, initializer="zeros", trainable=False)
            self.mean = array_ops.reshape(self.adapt_mean, self._broadcast_shape)
            self.variance = array_ops.reshape(self.adapt_variance, self._broadcast_shape)
        else:
            self.mean = convert_to_tensor(np.reshape(self.input_mean * np.ones(shape), self._broadcast_shape),
                                          dtype=self.dtype)
            self.variance = convert_to_tensor(np.reshape(self.input_variance * np.ones(shape),
                                                         self._broadcast_shape), dtype=self.dtype)
        self.built = True

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Sets ``mean`` and ``variance`` to those of ``data`` over the reduced axes."""
        if self.input_mean is not None:
            raise ValueError(f"Cannot `adapt` a Normalization layer that is initialized with static `mean` and "
                             f"`variance`, you passed mean {self.input_mean} and variance {self.input_variance}.")
        values = _values(data).astype(np.float64)
        if values.ndim == 1 and self.axis == (-1,):
            values = values[:, None]
        if not self.built:
            graph = backend.get_session().graph
            with graph.as_default(), graph.name_scope(self._name_scope()):
                self.build(TensorShape([None] + list(values.shape[1:])))
        reduce = tuple(self._reduce_axis)
        backend.batch_set_value([(self.adapt_mean, values.mean(axis=reduce)),
                                 (self.adapt_variance, values.var(axis=reduce)),
                                 (self.count, int(np.prod([values.shape[a] for a in reduce])))])

    def call(self, inputs: Any) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        scale = math_ops.maximum(math_ops.sqrt(self.variance), backend.epsilon())
        return self.mean + inputs * scale if self.invert else (inputs - self.mean) / scale

    def get_config(self) -> dict[str, Any]:
        def listed(value: Any) -> Any:
            return np.asarray(value).tolist() if value is not None else None

        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": listed(self.input_mean), "variance": listed(self.input_variance)}


class Rescaling(Layer):
    """``inputs * scale + offset``."""

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs: Any) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        return inputs * cast_ops.cast(self.scale, self.dtype) + cast_ops.cast(self.offset, self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


def _resize(images: Any, height: int, width: int, interpolation: str) -> Any:
    from flowmesh.ops import image_ops

    if interpolation == "bilinear":
        return image_ops.resize_bilinear(images, [height, width], half_pixel_centers=True)
    if interpolation == "nearest":
        return image_ops.resize_nearest_neighbor(images, [height, width], half_pixel_centers=True)
    if interpolation == "bicubic":
        return image_ops.resize_bicubic(images, [height, width], half_pixel_centers=True)
    if interpolation == "area":
        return image_ops.resize_area(images, [height, width])
    raise NotImplementedError(f"interpolation={interpolation!r} is not supported by flowmesh; use one of "
                              "'bilinear', 'nearest', 'bicubic', 'area'")


def smart_resize(images: Any, size: Any, interpolation: str = "bilinear") -> Any:
    """Resizes ``[batch,] h, w, c`` images to ``size`` after a centred crop to its aspect ratio."""
    images = convert_to_tensor(images)
    single = images.shape.rank == 3
    x = array_ops.expand_dims(images, 0) if single else images
    dims = array_ops.shape(x)
    height, width = cast_ops.cast(dims[1], "float32"), cast_ops.cast(dims[2], "float32")
    target_h, target_w = float(size[0]), float(size[1])
    crop_h = cast_ops.cast(math_ops.minimum(height, width * target_h / target_w), "int32")
    crop_w = cast_ops.cast(math_ops.minimum(width, height * target_w / target_h), "int32")
    top = (dims[1] - crop_h) // 2
    left = (dims[2] - crop_w) // 2
    x = manip_ops.slice(x, array_ops.stack([0, top, left, 0]), array_ops.stack([-1, crop_h, crop_w, -1]))
    out = _resize(x, int(size[0]), int(size[1]), interpolation)
    return array_ops.squeeze(out, [0]) if single else out


class Resizing(Layer):
    """Resizes images to ``height x width`` (``crop_to_aspect_ratio`` crops first, centred)."""

    def __init__(self, height: int, width: int, interpolation: str = "bilinear", crop_to_aspect_ratio: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.interpolation, self.crop_to_aspect_ratio = interpolation, crop_to_aspect_ratio

    def call(self, inputs: Any) -> Any:
        inputs = convert_to_tensor(inputs)
        if self.crop_to_aspect_ratio:
            out = smart_resize(inputs, [self.height, self.width], self.interpolation)
        else:
            single = inputs.shape.rank == 3
            x = array_ops.expand_dims(inputs, 0) if single else inputs
            out = _resize(x, self.height, self.width, self.interpolation)
            out = array_ops.squeeze(out, [0]) if single else out
        return cast_ops.cast(out, self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio}


class CenterCrop(Layer):
    """The central ``height x width`` window (smaller images are resized up to it)."""

    def __init__(self, height: int, width: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs: Any) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        rank = inputs.shape.rank
        dims = array_ops.shape(inputs)
        h_diff, w_diff = dims[rank - 3] - self.height, dims[rank - 2] - self.width

        def crop() -> Any:
            begin = [0] * (rank - 3) + [h_diff // 2, w_diff // 2, 0]
            size = [-1] * (rank - 3) + [self.height, self.width, -1]
            return manip_ops.slice(inputs, array_ops.stack(begin), size)

        def upsize() -> Any:
            return cast_ops.cast(smart_resize(inputs, [self.height, self.width]), self.dtype)

        fits = math_ops.logical_and(math_ops.greater_equal(h_diff, 0), math_ops.greater_equal(w_diff, 0))
        out = backend.smart_cond(fits, crop, upsize)
        out.set_shape(inputs.shape[:rank - 3].concatenate([self.height, self.width, inputs.shape[-1]]))
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width}


def encode_categorical(inputs: Any, output_mode: str, depth: int, count_weights: Any = None,
                       dtype: str = "float32") -> Any:
    """``one_hot``/``multi_hot``/``count`` encodings of integer ``inputs`` (``int``: as is);
    a rank-1 input is one value per sample."""
    if output_mode == "int":
        return inputs
    inputs = convert_to_tensor(inputs)
    if inputs.shape.rank == 1 or (output_mode == "one_hot" and inputs.shape.as_list()[-1] != 1):
        inputs = array_ops.expand_dims(inputs, -1)
    hot = manip_ops.one_hot(cast_ops.cast(inputs, "int64"), depth, dtype=dtype)
    if output_mode == "one_hot":
        return array_ops.squeeze(hot, [-2])
    if count_weights is not None:
        hot = hot * array_ops.expand_dims(cast_ops.cast(count_weights, dtype), -1)
    if output_mode == "multi_hot":
        return reduction_ops.reduce_max(hot, axis=-2)
    if output_mode == "count":
        return reduction_ops.reduce_sum(hot, axis=-2)
    raise ValueError(f"Unknown arg for output_mode: {output_mode}. Expected one of "
                     "('int', 'one_hot', 'multi_hot', 'count')")


class CategoryEncoding(Layer):
    """Integer category ids (in ``[0, num_tokens)``) as ``one_hot``, ``multi_hot`` or
    ``count`` vectors of ``num_tokens`` entries."""

    def __init__(self, num_tokens: int | None = None, output_mode: str = "multi_hot", sparse: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if num_tokens is None or num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) is not supported by flowmesh; use the dense "
                                      "output")
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, sparse

    def call(self, inputs: Any, count_weights: Any = None) -> Any:
        from flowmesh.core.graph import control_dependencies
        from flowmesh.ops.check_ops import assert_less

        inputs = convert_to_tensor(inputs)
        check = assert_less(reduction_ops.reduce_max(cast_ops.cast(inputs, "int64")),
                            np.int64(self.num_tokens),
                            message=f"Input values must be in the range 0 <= values < num_tokens with "
                                    f"num_tokens={self.num_tokens}")
        with control_dependencies([check]):
            inputs = array_ops.identity(inputs)
        return encode_categorical(inputs, self.output_mode, self.num_tokens, count_weights, self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode,
                "sparse": self.sparse}


class Hashing(Layer):
    """Hashes strings (integers as their decimal strings) into ``num_bins`` bins with
    FarmHash64 (``salt``: keyed SipHash); ``mask_value`` gets bin 0, the others ``1..``."""

    def __init__(self, num_bins: int, mask_value: Any = None, salt: Any = None, output_mode: str = "int",
                 sparse: bool = False, **kwargs: Any):
        if "dtype" not in kwargs or kwargs["dtype"] is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else backend.floatx()
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported by flowmesh; use the dense output")
        self.num_bins, self.mask_value, self.output_mode, self.sparse = num_bins, mask_value, output_mode, sparse
        self.strong_hash = salt is not None
        self.salt = [salt, salt] if isinstance(salt, int) else salt

    def call(self, inputs: Any) -> Any:
        from flowmesh.ops import string_hash_ops, string_ops
        from flowmesh.ops.select_ops import where

        values = convert_to_tensor(inputs)
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = math_ops.equal(values, self.mask_value)
        if values.dtype.is_integer:
            values = string_ops.as_string(values)
        if self.strong_hash:
            hashed = string_hash_ops.string_to_hash_bucket_strong(values, bins, key=self.salt, name="hash")
        else:
            hashed = string_ops.string_to_hash_bucket_fast(values, bins, name="hash")
        if mask is not None:
            hashed = where(mask, array_ops.zeros_like(hashed), hashed + 1)
        return encode_categorical(hashed, self.output_mode, self.num_bins, dtype=self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode, "sparse": self.sparse}


class Discretization(Layer):
    """Bucket index of each value: the number of ``bin_boundaries`` at or below it (learned
    with :meth:`adapt` as ``num_bins`` quantiles when not given)."""

    def __init__(self, bin_boundaries: Any = None, num_bins: int | None = None, epsilon: float = 0.01,
                 output_mode: str = "int", sparse: bool = False, **kwargs: Any):
        if "dtype" not in kwargs or kwargs["dtype"] is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else backend.floatx()
        super().__init__(**kwargs)
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not supported by flowmesh")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. You passed `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. You passed `num_bins="
                             f"{num_bins}` and `bin_boundaries={bin_boundaries}`")
        self.bin_boundaries = None if bin_boundaries is None else list(bin_boundaries)
        self.num_bins, self.epsilon, self.output_mode, self.sparse = num_bins, epsilon, output_mode, sparse

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Sets the boundaries to the ``num_bins`` quantiles of ``data`` (NumPy's quantiles;
        tf-keras's summary with ``epsilon`` can place them slightly differently)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer without `num_bins`.")
        values = np.sort(_values(data).astype(np.float64).ravel())
        quantiles = np.quantile(values, np.linspace(0, 1, self.num_bins + 1)[1:-1], method="lower")
        self.bin_boundaries = [float(q) for q in quantiles]

    def call(self, inputs: Any) -> Any:
        if self.bin_boundaries is None:
            raise RuntimeError(f"Layer {self.name}: give `bin_boundaries` or call adapt() before using it")
        values = cast_ops.cast(convert_to_tensor(inputs), "float32")
        boundaries = convert_to_tensor(np.asarray(self.bin_boundaries, np.float32))
        index = reduction_ops.reduce_sum(cast_ops.cast(math_ops.greater_equal(
            array_ops.expand_dims(values, -1), boundaries), "int64"), axis=-1)
        return encode_categorical(index, self.output_mode, len(self.bin_boundaries) + 1, dtype=self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode, "sparse": self.sparse}
