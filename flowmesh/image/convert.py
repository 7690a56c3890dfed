"""Dtype and colour-space conversions of ``tf.image``: ``convert_image_dtype`` (TensorFlow's
scaling and saturation rules), ``rgb_to_grayscale``, ``grayscale_to_rgb``."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, image_ops, linalg_ops, math_ops

_RGB_WEIGHTS = [0.2989, 0.5870, 0.1140]


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> Tensor:
    """Converts ``image`` to ``dtype``, scaling values as TensorFlow does: integers span
    ``[0, MAX]``, floats ``[0, 1)``; integer-to-integer shifts by the width ratio, float to
    integer multiplies by ``MAX + 0.5`` (saturating when ``saturate``)."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise TypeError(f"convert_image_dtype: dtype must be a float or integer type, got {dtype.name}")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise TypeError(f"convert_image_dtype: image must be a float or integer tensor, got "
                        f"{image.dtype.name}")
    if dtype == image.dtype:
        return array_ops.identity(image, name=name)
    with name_scope(name or "convert_image"):
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                scale = (scale_in + 1) // (scale_out + 1)
                if image.dtype in (dtypes.uint16, dtypes.uint32):  # no torch FloorDiv kernel
                    image = cast_ops.cast(image, dtypes.int64)
                return cast_ops.cast(math_ops.floordiv(image, scale), dtype)
            scale = (scale_out + 1) // (scale_in + 1)
            return math_ops.multiply(cast_ops.cast(image, dtype), scale)
        if image.dtype.is_floating and dtype.is_floating:
            return cast_ops.cast(image, dtype)
        if image.dtype.is_integer:
            return math_ops.multiply(cast_ops.cast(image, dtype), 1.0 / image.dtype.max)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast_ops.saturate_cast(scaled, dtype) if saturate else cast_ops.cast(scaled, dtype)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """``[..., 3]`` RGB images to ``[..., 1]`` luma (weights 0.2989, 0.587, 0.114)."""
    images = convert_to_tensor(images, name="images")
    if images.shape.rank is not None and images.shape[-1] not in (None, 3):
        raise InvalidArgumentError(f"rgb_to_grayscale: the last dimension must be 3 (RGB), "
                                   f"got shape {images.shape}")
    with name_scope(name or "rgb_to_grayscale"):
        flt = convert_image_dtype(images, dtypes.float32)
        weights = convert_to_tensor(_RGB_WEIGHTS, dtype=dtypes.float32)
        gray = array_ops.expand_dims(linalg_ops.tensordot(flt, weights, [[-1], [-1]]), -1)
        if images.shape.rank is not None:
            gray.set_shape(images.shape[:-1].concatenate([1]))
        return convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """``[..., 1]`` grayscale images to ``[..., 3]`` by repeating the channel."""
    images = convert_to_tensor(images, name="images")
    if images.shape.rank is not None and (images.shape.rank < 2 or images.shape[-1] not in (None, 1)):
        raise InvalidArgumentError(f"grayscale_to_rgb: the last dimension must be 1, got shape "
                                   f"{images.shape}")
    with name_scope(name or "grayscale_to_rgb"):
        return array_ops.concat([images, images, images], -1)


def decode_image(contents: Any, channels: int | None = None, dtype: Any = dtypes.uint8,
                 name: str | None = None, expand_animations: bool = True) -> Tensor:
    """PNG, JPEG, GIF or BMP bytes as an image tensor (``tf.image.decode_image``): rank 3,
    or rank 4 ``[frames, h, w, c]`` for a GIF when ``expand_animations``; the ``uint8``
    pixels converted to ``dtype`` with :func:`convert_image_dtype`'s rules."""
    dtype = dtypes.as_dtype(dtype)
    raw = dtype if dtype in (dtypes.uint8, dtypes.uint16) else dtypes.uint8
    image = image_ops.decode_image_bytes(contents, channels or 0, expand_animations, name, raw)
    return image if dtype == raw else convert_image_dtype(image, dtype)
