"""Crops, pads, flips and resizes of ``tf.image`` on ``[h, w, c]`` or ``[n, h, w, c]``
images. Static sizes are checked when the graph is built (``InvalidArgumentError`` naming the
function and the shapes); dynamic ones by the slice/pad kernels when the step runs."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, image_ops, logging_ops, manip_ops, math_ops, reduction_ops


class ResizeMethod:
    """``tf.image.ResizeMethod`` of TensorFlow 1.x (integer codes)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


def image_rank(image: Tensor, fn: str) -> int:
    """The rank of ``image`` (3 or 4), else ``InvalidArgumentError``."""
    rank = image.shape.rank
    if rank not in (3, 4):
        raise InvalidArgumentError(f"{fn}: 'image' must be 3-D [height, width, channels] or 4-D "
                                   f"[batch, height, width, channels], got shape {image.shape}")
    return rank


def _hw(image: Tensor) -> tuple[int | None, int | None]:
    dims = image.shape.as_list()[-3:-1]
    return dims[0], dims[1]


def _check(cond: bool, fn: str, message: str, image: Tensor) -> None:
    if cond:
        raise InvalidArgumentError(f"{fn}: {message} (image shape {image.shape})")


def _checked(image: Tensor, fn: str, checks: list[tuple[Any, str]]) -> Tensor:
    """``image`` behind run-time ``Assert``s for the checks whose condition is a tensor."""
    asserts = [logging_ops.Assert(cond, [f"{fn}: {message}; image shape:", array_ops.shape(image)])
               for cond, message in checks if isinstance(cond, Tensor)]
    if not asserts:
        return image
    with control_dependencies(asserts):
        return array_ops.identity(image)


def _static(value: Any) -> int | None:
    return int(value) if isinstance(value, int) or hasattr(value, "__index__") else None


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                         target_width: Any) -> Tensor:
    """The ``target_height x target_width`` window at ``(offset_height, offset_width)``."""
    fn = "crop_to_bounding_box"
    image = convert_to_tensor(image, name="image")
    rank = image_rank(image, fn)
    oh, ow, th, tw = (_static(v) for v in (offset_height, offset_width, target_height, target_width))
    height, width = _hw(image)
    _check(oh is not None and oh < 0, fn, f"offset_height must be >= 0, got {oh}", image)
    _check(ow is not None and ow < 0, fn, f"offset_width must be >= 0, got {ow}", image)
    _check(th is not None and th <= 0, fn, f"target_height must be > 0, got {th}", image)
    _check(tw is not None and tw <= 0, fn, f"target_width must be > 0, got {tw}", image)
    if None not in (oh, th, height):
        _check(height < oh + th, fn, f"height {height} must be >= target {th} + offset {oh}", image)
    if None not in (ow, tw, width):
        _check(width < ow + tw, fn, f"width {width} must be >= target {tw} + offset {ow}", image)
    with name_scope("crop_to_bounding_box"):
        shape = array_ops.shape(image)
        image = _checked(image, fn, [
            (math_ops.greater_equal(shape[rank - 3], offset_height + target_height)
             if None in (oh, th, height) else True, "height must be >= target_height + offset_height"),
            (math_ops.greater_equal(shape[rank - 2], offset_width + target_width)
             if None in (ow, tw, width) else True, "width must be >= target_width + offset_width")])
        begin = array_ops.stack([0, offset_height, offset_width, 0][4 - rank:])
        size = array_ops.stack([-1, target_height, target_width, -1][4 - rank:])
        return manip_ops.slice(image, begin, size)


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                        target_width: Any) -> Tensor:
    """``image`` placed at ``(offset_height, offset_width)`` in a zero
    ``target_height x target_width`` canvas."""
    fn = "pad_to_bounding_box"
    image = convert_to_tensor(image, name="image")
    rank = image_rank(image, fn)
    oh, ow, th, tw = (_static(v) for v in (offset_height, offset_width, target_height, target_width))
    height, width = _hw(image)
    _check(oh is not None and oh < 0, fn, f"offset_height must be >= 0, got {oh}", image)
    _check(ow is not None and ow < 0, fn, f"offset_width must be >= 0, got {ow}", image)
    if None in (oh, ow, th, tw, height, width):
        shape = array_ops.shape(image)
        height = shape[rank - 3] if height is None else height
        width = shape[rank - 2] if width is None else width
    after_h = target_height - offset_height - height
    after_w = target_width - offset_width - width
    _check(isinstance(after_h, int) and after_h < 0, fn,
           f"height {height} + offset {oh} must be <= target_height {th}", image)
    _check(isinstance(after_w, int) and after_w < 0, fn,
           f"width {width} + offset {ow} must be <= target_width {tw}", image)
    with name_scope("pad_to_bounding_box"):
        image = _checked(image, fn, [
            (math_ops.greater_equal(after_h, 0) if isinstance(after_h, Tensor) else True,
             "height + offset_height must be <= target_height"),
            (math_ops.greater_equal(after_w, 0) if isinstance(after_w, Tensor) else True,
             "width + offset_width must be <= target_width")])
        rows = [[0, 0], [offset_height, after_h], [offset_width, after_w], [0, 0]][4 - rank:]
        paddings = array_ops.stack([array_ops.stack(r) for r in rows])
        return manip_ops.pad(image, paddings)


def resize_image_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Tensor:
    """Centre-crops and/or zero-pads ``image`` to ``target_height x target_width``."""
    fn = "resize_image_with_crop_or_pad"
    image = convert_to_tensor(image, name="image")
    image_rank(image, fn)
    height, width = _hw(image)
    _check(height is None or width is None, fn, "needs a static height and width", image)
    _check(target_height <= 0 or target_width <= 0, fn,
           f"targets must be > 0, got {target_height}x{target_width}", image)
    dh, dw = target_height - height, target_width - width
    cropped = crop_to_bounding_box(image, max(-dh // 2, 0), max(-dw // 2, 0),
                                   min(target_height, height), min(target_width, width))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), target_height, target_width)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central ``central_fraction`` of ``image``'s height and width."""
    fn = "central_crop"
    image = convert_to_tensor(image, name="image")
    rank = image_rank(image, fn)
    if not 0.0 < central_fraction <= 1.0:
        raise InvalidArgumentError(f"{fn}: central_fraction must be within (0, 1], got "
                                   f"{central_fraction}")
    if central_fraction == 1.0:
        return image
    height, width = _hw(image)
    _check(height is None or width is None, fn, "needs a static height and width", image)
    start_h = int((float(height) - float(height) * central_fraction) / 2)
    start_w = int((float(width) - float(width) * central_fraction) / 2)
    with name_scope("central_crop"):
        begin = [0, start_h, start_w, 0][4 - rank:]
        size = [-1, height - 2 * start_h, width - 2 * start_w, -1][4 - rank:]
        return manip_ops.slice(image, begin, size)


def flip_left_right(image: Any) -> Tensor:
    """``image`` mirrored along its width."""
    image = convert_to_tensor(image, name="image")
    return manip_ops.reverse(image, [image_rank(image, "flip_left_right") - 2])


def flip_up_down(image: Any) -> Tensor:
    """``image`` mirrored along its height."""
    image = convert_to_tensor(image, name="image")
    return manip_ops.reverse(image, [image_rank(image, "flip_up_down") - 3])


def resize_images(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR,
                  align_corners: bool = False, preserve_aspect_ratio: bool = False,
                  name: str | None = None) -> Tensor:
    """Resizes ``[h, w, c]`` or ``[n, h, w, c]`` images to ``size`` with TensorFlow 1.x's
    ``resize_images`` (legacy pixel alignment; unchanged input when the size already matches)."""
    images = convert_to_tensor(images, name="images")
    is_batch = image_rank(images, "resize_images") == 4
    method = _METHOD_NAMES.get(method, method) if isinstance(method, str) else method
    with name_scope(name or "resize"):
        if not is_batch:
            images = array_ops.expand_dims(images, 0)
        size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        if size_t.shape.as_list() not in ([2], [None]):
            raise InvalidArgumentError(f"resize_images: 'size' must be a 1-D Tensor of 2 "
                                       f"elements: new_height, new_width; got shape {size_t.shape}")
        if preserve_aspect_ratio:
            size_t = _aspect_size(images, size_t)
        out = _resize_fn(method)(images, size_t, align_corners=align_corners)
        if out.shape.as_list()[1:3] == images.shape.as_list()[1:3] and None not in out.shape.as_list()[1:3]:
            out = images
        return out if is_batch else array_ops.squeeze(out, [0])


def _aspect_size(images: Tensor, size: Tensor) -> Tensor:
    """The largest size within ``size`` with ``images``' aspect ratio (TensorFlow's float32
    arithmetic, rounded half to even)."""
    hw = cast_ops.cast(array_ops.shape(images)[1:3], dtypes.float32)
    factor = reduction_ops.reduce_min(math_ops.truediv(cast_ops.cast(size, dtypes.float32), hw))
    return cast_ops.cast(math_ops.round(math_ops.multiply(factor, hw)), dtypes.int32)


def _resize_fn(method: int):
    table = {ResizeMethod.BILINEAR: image_ops.resize_bilinear,
             ResizeMethod.NEAREST_NEIGHBOR: image_ops.resize_nearest_neighbor,
             ResizeMethod.BICUBIC: image_ops.resize_bicubic,
             ResizeMethod.AREA: image_ops.resize_area}
    if method not in table:
        raise InvalidArgumentError(f"resize_images: resize method is not implemented: {method!r}")
    return table[method]
