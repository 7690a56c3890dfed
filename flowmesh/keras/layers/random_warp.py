"""Image augmentation layers that warp: ``RandomRotation RandomTranslation RandomZoom``
(tf-keras's definitions and transform matrices, applied by ``ImageProjectiveTransformV3``;
the identity at inference). One random transform per image while training, drawn from
flowmesh's random ops."""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras.layers.random_image import _RandomLayer
from flowmesh.ops import array_ops, cast_ops, math_ops, random_ops
from flowmesh.ops.image_transform_ops import image_projective_transform_v3

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _bounds(factor: Any) -> tuple[float, float]:
    if isinstance(factor, (tuple, list)):
        return float(factor[0]), float(factor[1])
    return -float(factor), float(factor)


def _check(fill_mode: str, interpolation: str) -> None:
    if fill_mode not in _FILL_MODES:
        raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Only `reflect`, `wrap`, `constant` and "
                                  "`nearest` are supported.")
    if interpolation not in ("nearest", "bilinear"):
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Only `nearest` and `bilinear` are "
                                  "supported.")


def _column(values: list[Any]) -> Any:
    return array_ops.concat([array_ops.reshape(v, [-1, 1]) for v in values], 1)


def get_rotation_matrix(angles: Any, image_height: Any, image_width: Any) -> Any:
    """``[n, 8]`` transforms rotating by ``angles`` about the image centre."""
    cos, sin = math_ops.cos(angles), math_ops.sin(angles)
    x_offset = ((image_width - 1) - (cos * (image_width - 1) - sin * (image_height - 1))) / 2.0
    y_offset = ((image_height - 1) - (sin * (image_width - 1) + cos * (image_height - 1))) / 2.0
    zeros = array_ops.zeros_like(angles)
    return _column([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros])


def get_translation_matrix(translations: Any) -> Any:
    """``[n, 8]`` transforms shifting by ``[n, 2]`` (dx, dy) pixels."""
    ones, zeros = array_ops.ones_like(translations[:, 0]), array_ops.zeros_like(translations[:, 0])
    return _column([ones, zeros, -translations[:, 0], zeros, ones, -translations[:, 1], zeros, zeros])


def get_zoom_matrix(zooms: Any, image_height: Any, image_width: Any) -> Any:
    """``[n, 8]`` transforms scaling by ``[n, 2]`` (x, y) factors about the image centre."""
    zeros = array_ops.zeros_like(zooms[:, 0])
    x_offset = ((image_width - 1.0) / 2.0) * (1.0 - zooms[:, 0])
    y_offset = ((image_height - 1.0) / 2.0) * (1.0 - zooms[:, 1])
    return _column([zooms[:, 0], zeros, x_offset, zeros, zooms[:, 1], y_offset, zeros, zeros])


class _Warp(_RandomLayer):
    def __init__(self, fill_mode: str, interpolation: str, seed: int | None, fill_value: float, **kwargs: Any):
        super().__init__(seed, **kwargs)
        _check(fill_mode, interpolation)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, fill_value

    def _transforms(self, batch: Any, height: Any, width: Any) -> Any:
        raise NotImplementedError

    def _augment(self, inputs: Any) -> Any:
        single = inputs.shape.rank == 3
        images = array_ops.expand_dims(inputs, 0) if single else inputs
        dims = array_ops.shape(images)
        height, width = cast_ops.cast(dims[1], dtypes.float32), cast_ops.cast(dims[2], dtypes.float32)
        out = image_projective_transform_v3(images, self._transforms(dims[0], height, width), dims[1:3],
                                            self.fill_value, self.interpolation, self.fill_mode)
        out = array_ops.squeeze(out, [0]) if single else out
        out.set_shape(inputs.shape)
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "interpolation": self.interpolation}


class RandomRotation(_Warp):
    """Rotates each image by ``2 pi * f`` radians, ``f`` drawn from ``factor`` (``x``:
    ``[-x, x]``; a pair: that interval).

    Raises:
        ValueError: an upper bound below the lower one.
        NotImplementedError: an unknown ``fill_mode`` or ``interpolation``.
    """

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self.lower, self.upper = _bounds(factor)
        if self.upper < self.lower:
            raise ValueError(f"`factor` argument cannot have a negative value. Received: factor={factor}")

    def _transforms(self, batch: Any, height: Any, width: Any) -> Any:
        angles = random_ops.random_uniform(array_ops.reshape(batch, [1]), self.lower * 2.0 * math.pi,
                                           self.upper * 2.0 * math.pi, seed=self._seed())
        return get_rotation_matrix(angles, height, width)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor}


class RandomTranslation(_Warp):
    """Shifts each image by fractions of its height and width drawn from ``height_factor``
    and ``width_factor`` (each within [-1, 1]).

    Raises:
        ValueError: bounds out of [-1, 1] or reversed.
    """

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _bounds(height_factor)
        self.width_lower, self.width_upper = _bounds(width_factor)
        for name, (low, high), given in (("height_factor", (self.height_lower, self.height_upper), height_factor),
                                         ("width_factor", (self.width_lower, self.width_upper), width_factor)):
            if high < low:
                raise ValueError(f"`{name}` cannot have upper bound less than lower bound, got {given}")
            if abs(low) > 1.0 or abs(high) > 1.0:
                raise ValueError(f"`{name}` argument must have values between [-1, 1]. Received: {name}={given}")

    def _transforms(self, batch: Any, height: Any, width: Any) -> Any:
        shape = array_ops.stack([batch, 1])
        dy = random_ops.random_uniform(shape, self.height_lower, self.height_upper, seed=self._seed()) * height
        dx = random_ops.random_uniform(shape, self.width_lower, self.width_upper, seed=self._seed()) * width
        return get_translation_matrix(array_ops.concat([dx, dy], 1))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor}


class RandomZoom(_Warp):
    """Zooms each image by ``1 + f`` (``f`` < 0 zooms in), ``f`` drawn from
    ``height_factor`` (and ``width_factor``, else the same factor for both axes).

    Raises:
        ValueError: factors out of range.
    """

    def __init__(self, height_factor: Any, width_factor: Any = None, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _bounds(height_factor)
        if abs(self.height_lower) > 1.0 or abs(self.height_upper) > 1.0:
            raise ValueError("`height_factor` argument must have values between [-1, 1]. "
                             f"Received: height_factor={height_factor}")
        if width_factor is not None:
            self.width_lower, self.width_upper = _bounds(width_factor)
            if self.width_lower < -1.0 or self.width_upper < -1.0:
                raise ValueError("`width_factor` argument must have values larger than -1. "
                                 f"Received: width_factor={width_factor}")

    def _transforms(self, batch: Any, height: Any, width: Any) -> Any:
        shape = array_ops.stack([batch, 1])
        zoom_y = random_ops.random_uniform(shape, 1.0 + self.height_lower, 1.0 + self.height_upper, seed=self._seed())
        zoom_x = zoom_y if self.width_factor is None else random_ops.random_uniform(
            shape, 1.0 + self.width_lower, 1.0 + self.width_upper, seed=self._seed())
        return get_zoom_matrix(array_ops.concat([zoom_x, zoom_y], 1), height, width)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor}
