"""Image augmentation layers that need no geometric warp: ``RandomFlip RandomContrast
RandomBrightness RandomCrop RandomHeight RandomWidth`` (tf-keras's definitions, configs and
inference behaviour: the identity, except ``RandomCrop``'s centred crop-and-resize).

While training (``training=True`` or the learning phase), they draw from flowmesh's random
ops: the same distributions as tf-keras, not its random streams.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import backend
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.layers.preprocessing import _resize, smart_resize
from flowmesh.ops import array_ops, cast_ops, clip_ops, manip_ops, math_ops, random_ops, reduction_ops
from flowmesh.ops.select_ops import where


class _RandomLayer(Layer):
    """A layer that transforms while training and passes inputs through otherwise."""

    def __init__(self, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.seed = seed
        self._draws = 0

    def _seed(self) -> int | None:
        """A distinct op seed for each draw of a seeded layer."""
        if self.seed is None:
            return None
        self._draws += 1
        return self.seed + self._draws - 1

    def call(self, inputs: Any, training: Any = None) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        return backend.smart_cond(backend.training_value(training), lambda: self._augment(inputs),
                                  lambda: self._inference(inputs))

    def _inference(self, inputs: Any) -> Any:
        return array_ops.identity(inputs)

    def _augment(self, inputs: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "seed": self.seed}


def _per_image(inputs: Any) -> list[Any]:
    """The shape of one random number per image, broadcast over ``h, w, c``."""
    if inputs.shape.rank == 3:
        return [1, 1, 1]
    return array_ops.stack([array_ops.shape(inputs)[0], 1, 1, 1])


class RandomFlip(_RandomLayer):
    """Flips each image left-right and/or up-down with probability 1/2.

    Raises:
        ValueError: an unknown ``mode``.
    """

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        self.mode = mode
        self.horizontal, self.vertical = "horizontal" in mode, "vertical" in mode

    def _augment(self, inputs: Any) -> Any:
        out = inputs
        width_axis, height_axis = inputs.shape.rank - 2, inputs.shape.rank - 3
        for enabled, axis in ((self.horizontal, width_axis), (self.vertical, height_axis)):
            if enabled:
                flip = random_ops.random_uniform(_per_image(inputs), seed=self._seed()) < 0.5
                flip = math_ops.logical_and(flip, array_ops.ones_like(out, dtype=dtypes.bool))
                out = where(flip, manip_ops.reverse(out, [axis]), out)
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mode": self.mode}


def _factor_pair(factor: Any, name: str) -> tuple[float, float]:
    """``(lower, upper)`` from a number ``f`` (``(f, f)``) or a pair.

    Raises:
        ValueError: a negative bound or a pair of the wrong length.
    """
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"`{name}` must be a float or a pair of floats, got {factor}")
        lower, upper = float(factor[0]), float(factor[1])
    else:
        lower = upper = float(factor)
    if lower < 0.0 or upper < 0.0:
        raise ValueError(f"`{name}` cannot have negative values, got {factor}")
    return lower, upper


class RandomContrast(_RandomLayer):
    """Scales each channel's deviation from its mean by a factor drawn from
    ``[1 - lower, 1 + upper]`` (one factor for the batch, as ``tf.image.random_contrast``),
    then clips to 0..255.

    Raises:
        ValueError: a negative factor or ``lower > 1``.
    """

    def __init__(self, factor: Any, seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        self.factor = factor
        self.lower, self.upper = _factor_pair(factor, "factor")
        if self.lower > 1.0:
            raise ValueError(f"Factor cannot have negative values or greater than 1.0, got {factor}")

    def _augment(self, inputs: Any) -> Any:
        factor = random_ops.random_uniform([], 1.0 - self.lower, 1.0 + self.upper, seed=self._seed())
        axes = [inputs.shape.rank - 3, inputs.shape.rank - 2]
        mean = reduction_ops.reduce_mean(inputs, axis=axes, keepdims=True)
        return clip_ops.clip_by_value((inputs - mean) * factor + mean, 0.0, 255.0)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor}


class RandomBrightness(_RandomLayer):
    """Adds ``delta * (value_range[1] - value_range[0])`` to each image, ``delta`` drawn
    from ``factor`` (``f``: ``[-f, f]``; a pair: that interval), clipped to ``value_range``.

    Raises:
        ValueError: a factor outside [-1, 1] or a malformed ``value_range``.
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        message = "The `factor` argument should be a number (or a list of two numbers) in the range [-1.0, 1.0]. "
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or any(f > 1.0 or f < -1.0 for f in factor):
                raise ValueError(message + f"Got {factor}")
            self._factor = sorted(factor)
        elif isinstance(factor, (int, float)) and -1.0 <= factor <= 1.0:
            self._factor = [-abs(factor), abs(factor)]
        else:
            raise ValueError(message + f"Got {factor}")
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(f"The `value_range` argument should be a list of two numbers. Got {value_range}")
        self._value_range = sorted(value_range)

    def _augment(self, inputs: Any) -> Any:
        if inputs.shape.rank not in (3, 4):
            raise ValueError(f"Expected the input image to be rank 3 or 4. Got inputs.shape = {inputs.shape}")
        low, high = self._value_range
        delta = random_ops.random_uniform(_per_image(inputs), self._factor[0], self._factor[1], seed=self._seed())
        return clip_ops.clip_by_value(inputs + cast_ops.cast(delta * (high - low), inputs.dtype), low, high)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self._factor, "value_range": self._value_range}


class RandomCrop(_RandomLayer):
    """Crops a random ``height x width`` window (the same for the batch) while training;
    otherwise, or when an image is smaller, resizes the largest centred window of the target
    aspect ratio (``smart_resize``)."""

    def __init__(self, height: int, width: int, seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs: Any, training: Any = None) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        rank = inputs.shape.rank
        dims = array_ops.shape(inputs)
        h_diff, w_diff = dims[rank - 3] - self.height, dims[rank - 2] - self.width

        def crop() -> Any:
            rands = random_ops.random_uniform([2], 0, 2 ** 31 - 1, dtype=dtypes.int32, seed=self._seed())
            h_start, w_start = rands[0] % (h_diff + 1), rands[1] % (w_diff + 1)
            begin = [0] * (rank - 3) + [h_start, w_start, 0]
            size = [-1] * (rank - 3) + [self.height, self.width, -1]
            return manip_ops.slice(inputs, array_ops.stack(begin), size)

        def resize() -> Any:
            return cast_ops.cast(smart_resize(inputs, [self.height, self.width]), self.dtype)

        fits = math_ops.logical_and(math_ops.greater_equal(h_diff, 0), math_ops.greater_equal(w_diff, 0))
        out = backend.smart_cond(math_ops.logical_and(backend.training_value(training), fits), crop, resize)
        out.set_shape(inputs.shape[:rank - 3].concatenate([self.height, self.width, inputs.shape[-1]]))
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width}


def _resize_factor(factor: Any, name: str) -> tuple[float, float]:
    """``(lower, upper)`` relative changes: ``f`` gives ``(-f, f)``.

    Raises:
        ValueError: ``upper < lower`` or ``lower < -1``.
    """
    if isinstance(factor, (tuple, list)):
        lower, upper = float(factor[0]), float(factor[1])
    else:
        lower, upper = -float(factor), float(factor)
    if upper < lower:
        raise ValueError(f"`factor` argument cannot have an upper bound less than the lower bound. Got {factor}")
    if lower < -1.0 or upper < -1.0:
        raise ValueError(f"`factor` argument must have values larger than -1. Got {factor}")
    return lower, upper


class _RandomResize(_RandomLayer):
    axis_from_end = 3  # RandomHeight: rows; RandomWidth sets 2 (columns)

    def __init__(self, factor: Any, interpolation: str = "bilinear", seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        self.factor, self.interpolation = factor, interpolation
        self.lower, self.upper = _resize_factor(factor, "factor")

    def _augment(self, inputs: Any) -> Any:
        rank = inputs.shape.rank
        dims = array_ops.shape(inputs)
        axis = rank - self.axis_from_end
        scale = random_ops.random_uniform([], 1.0 + self.lower, 1.0 + self.upper, seed=self._seed())
        size = cast_ops.cast(scale * cast_ops.cast(dims[axis], dtypes.float32), dtypes.int32)
        height, width = (size, dims[rank - 2]) if self.axis_from_end == 3 else (dims[rank - 3], size)
        batch = inputs if rank == 4 else array_ops.expand_dims(inputs, 0)
        out = cast_ops.cast(_resize(batch, height, width, self.interpolation), self.dtype)
        out = out if rank == 4 else array_ops.squeeze(out, [0])
        shape = inputs.shape.as_list()
        shape[axis] = None
        out.set_shape(shape)
        return out

    def call(self, inputs: Any, training: Any = None) -> Any:
        inputs = cast_ops.cast(convert_to_tensor(inputs), self.dtype)
        training = backend.training_value(training)
        if isinstance(training, bool):
            return self._augment(inputs) if training else inputs
        from flowmesh.ops.cond import cond

        out = cond(training, lambda: self._augment(inputs), lambda: array_ops.identity(inputs))
        shape = inputs.shape.as_list()
        shape[inputs.shape.rank - self.axis_from_end] = None
        out.set_shape(shape)
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor, "interpolation": self.interpolation}


class RandomHeight(_RandomResize):
    """Resizes the batch to ``height * (1 + d)`` rows, ``d`` drawn from ``factor`` (one for
    the batch); the identity at inference."""

    axis_from_end = 3


class RandomWidth(_RandomResize):
    """Resizes the batch to ``width * (1 + d)`` columns, ``d`` drawn from ``factor``."""

    axis_from_end = 2
