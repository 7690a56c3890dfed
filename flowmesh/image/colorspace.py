"""HSV colour space of ``tf.image``: ``rgb_to_hsv``/``hsv_to_rgb`` with the formulas of
TensorFlow's ``RGBToHSV``/``HSVToRGB`` kernels (hue in ``[0, 1)``, elementwise graph ops),
and hue/saturation adjustments (plain and random) built on them. TensorFlow fuses the
adjustments into one kernel with its own float arithmetic; the composition here agrees to
float rounding (RGB is continuous in hue and saturation)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.image.convert import convert_image_dtype
from flowmesh.ops import array_ops, cast_ops, clip_ops, math_ops, random_ops, select_ops

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _channels(images: Any, fn: str) -> Tensor:
    images = convert_to_tensor(images, name="images")
    if images.dtype not in _FLOATS:
        raise TypeError(f"{fn}: images must be float16, float32 or float64, got "
                        f"{images.dtype.name} (convert_image_dtype first)")
    if images.shape.rank is not None and images.shape[-1] not in (None, 3):
        raise InvalidArgumentError(f"{fn}: the last dimension must be 3, got shape {images.shape}")
    return images


def _planes(images: Tensor) -> list[Tensor]:
    """The three channels as separate tensors; with a known rank through one transpose to
    channel planes (elementwise ops on contiguous planes run ~4x faster in torch than on
    the stride-3 views of the interleaved channels)."""
    rank = images.shape.rank
    if rank is None:
        return array_ops.unstack(images, 3, axis=-1)
    planar = array_ops.transpose(images, [rank - 1] + list(range(rank - 1)))
    return array_ops.unstack(planar, 3, axis=0)


def _interleaved(planes: list[Tensor]) -> Tensor:
    """Three channel tensors as one ``[..., 3]`` tensor (stacked as planes, then one
    transpose: stacking along the last axis directly is ~4x slower in torch)."""
    rank = planes[0].shape.rank
    if rank is None:
        return array_ops.stack(planes, axis=-1)
    return array_ops.transpose(array_ops.stack(planes, axis=0), list(range(1, rank + 1)) + [0])


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """``[..., 3]`` RGB floats in ``[0, 1]`` to HSV (hue, saturation, value in ``[0, 1]``)."""
    images = _channels(images, "rgb_to_hsv")
    with name_scope(name or "rgb_to_hsv"):
        return _interleaved(_to_hsv(*_planes(images)))


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """``[..., 3]`` HSV floats (hue in ``[0, 1]``) to RGB."""
    images = _channels(images, "hsv_to_rgb")
    with name_scope(name or "hsv_to_rgb"):
        return _interleaved(_to_rgb(*_planes(images)))


def _to_hsv(r: Tensor, g: Tensor, b: Tensor) -> list[Tensor]:
    """``RGBToHSV``'s arithmetic on channel tensors."""
    v = math_ops.maximum(math_ops.maximum(r, g), b)
    spread = math_ops.subtract(v, math_ops.minimum(math_ops.minimum(r, g), b))
    zero = array_ops.zeros_like(v)
    s = select_ops.where_v2(math_ops.greater(v, 0.0), math_ops.truediv(spread, v), zero)
    norm = math_ops.multiply(math_ops.reciprocal(spread), 1.0 / 6.0)
    h = select_ops.where_v2(
        math_ops.equal(r, v), math_ops.multiply(norm, math_ops.subtract(g, b)),
        select_ops.where_v2(
            math_ops.equal(g, v),
            math_ops.add(math_ops.multiply(norm, math_ops.subtract(b, r)), 2.0 / 6.0),
            math_ops.add(math_ops.multiply(norm, math_ops.subtract(r, g)), 4.0 / 6.0)))
    h = select_ops.where_v2(math_ops.greater(spread, 0.0), h, zero)
    return [select_ops.where_v2(math_ops.less(h, 0.0), math_ops.add(h, 1.0), h), s, v]


def _to_rgb(h: Tensor, s: Tensor, v: Tensor) -> list[Tensor]:
    """``HSVToRGB``'s arithmetic on channel tensors."""
    dh = math_ops.multiply(h, 6.0)

    def ramp(center: float, sign: float, offset: float) -> Tensor:
        distance = math_ops.abs(math_ops.subtract(dh, center))
        return clip_ops.clip_by_value(math_ops.add(math_ops.multiply(distance, sign), offset),
                                      0.0, 1.0)
    one_s = math_ops.add(math_ops.negative(s), 1.0)
    return [math_ops.multiply(math_ops.add(one_s, math_ops.multiply(s, d)), v)
            for d in (ramp(3.0, 1.0, -1.0), ramp(2.0, -1.0, 2.0), ramp(4.0, -1.0, 2.0))]


def _adjust_hsv(image: Any, fn: str, change: Any) -> Tensor:
    """``image`` through HSV with ``change(h, s, v) -> (h, s, v)``, back in its dtype."""
    image = convert_to_tensor(image, name="image")
    with name_scope(fn):
        flt = image if image.dtype == dtypes.float32 else (
            cast_ops.cast(image, dtypes.float32) if image.dtype in _FLOATS
            else convert_image_dtype(image, dtypes.float32))
        rgb = _interleaved(_to_rgb(*change(*_to_hsv(*_planes(flt)))))
        if image.dtype in _FLOATS:
            return rgb if image.dtype == dtypes.float32 else cast_ops.cast(rgb, image.dtype)
        return convert_image_dtype(rgb, image.dtype, saturate=True)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """Rotates the hue of RGB ``image`` by ``delta`` (a fraction of the colour circle,
    ``[-1, 1]``)."""
    def change(h: Tensor, s: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        shifted = math_ops.add(h, cast_ops.cast(delta, dtypes.float32))
        return math_ops.subtract(shifted, math_ops.floor(shifted)), s, v
    return _adjust_hsv(image, name or "adjust_hue", change)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """Scales the saturation of RGB ``image`` by ``saturation_factor`` (clipped to
    ``[0, 1]``)."""
    def change(h: Tensor, s: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        factor = cast_ops.cast(saturation_factor, dtypes.float32)
        return h, clip_ops.clip_by_value(math_ops.multiply(s, factor), 0.0, 1.0), v
    return _adjust_hsv(image, name or "adjust_saturation", change)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_hue` by a delta uniform in ``[-max_delta, max_delta)``, ``max_delta``
    in ``[0, 0.5]``."""
    if not 0.0 <= max_delta <= 0.5:
        raise InvalidArgumentError(f"random_hue: max_delta must be in [0, 0.5], got {max_delta}")
    return adjust_hue(image, random_ops.random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_saturation` by a factor uniform in ``[lower, upper)``."""
    if upper <= lower:
        raise InvalidArgumentError(f"random_saturation: upper ({upper}) must be > lower ({lower})")
    if lower < 0:
        raise InvalidArgumentError(f"random_saturation: lower must be non-negative, got {lower}")
    return adjust_saturation(image, random_ops.random_uniform([], lower, upper, seed=seed))
