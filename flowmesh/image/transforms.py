"""More of ``tf.image``: quarter turns and transposes, ``resize_image_with_pad``, gamma,
the YIQ/YUV colour spaces and JPEG re-encoding (``adjust_jpeg_quality``,
``random_jpeg_quality``), as TensorFlow's ``image_ops_impl.py`` builds them."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.image.convert import convert_image_dtype
from flowmesh.image.geometry import ResizeMethod, image_rank, pad_to_bounding_box, resize_images
from flowmesh.ops import (
    array_ops,
    cast_ops,
    cond,
    image_ops,
    linalg_ops,
    logging_ops,
    manip_ops,
    math_ops,
    random_ops,
)

_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _turns(image: Tensor, k: int, rank: int) -> Tensor:
    h, perm = rank - 3, [1, 0, 2] if rank == 3 else [0, 2, 1, 3]
    if k == 1:
        return array_ops.transpose(manip_ops.reverse(image, [h + 1]), perm)
    if k == 2:
        return manip_ops.reverse(image, [h, h + 1])
    if k == 3:
        return manip_ops.reverse(array_ops.transpose(image, perm), [h + 1])
    return image


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Tensor:
    """``image`` (``[h, w, c]`` or ``[n, h, w, c]``) rotated counter-clockwise by ``k``
    quarter turns (``k`` an int or a scalar int32 tensor)."""
    with name_scope(name, "rot90"):
        image = convert_to_tensor(image, name="image")
        rank = image_rank(image, "rot90")
        if isinstance(k, int):
            return _turns(image, k % 4, rank)
        k_t = math_ops.mod(convert_to_tensor(k, dtype=dtypes.int32, name="k"), 4)
        if k_t.shape.rank not in (None, 0):
            raise ValueError(f"rot90: k must be a scalar, got shape {k_t.shape}")
        pairs = [(math_ops.equal(k_t, i), lambda i=i: _turns(image, i, rank)) for i in (1, 2, 3)]
        result = cond.case(pairs, default=lambda: image, exclusive=True)
        dims = image.shape.as_list()
        result.set_shape([None, None, dims[2]] if rank == 3 else [dims[0], None, None, dims[3]])
        return result


def transpose(image: Any, name: str | None = None) -> Tensor:
    """``image`` with height and width swapped (``tf.image.transpose`` /
    ``transpose_image``)."""
    with name_scope(name, "transpose"):
        image = convert_to_tensor(image, name="image")
        perm = [1, 0, 2] if image_rank(image, "transpose") == 3 else [0, 2, 1, 3]
        return array_ops.transpose(image, perm)


def resize_image_with_pad(image: Any, target_height: Any, target_width: Any,
                          method: Any = ResizeMethod.BILINEAR, align_corners: bool = False) -> Tensor:
    """``image`` resized to fit ``target_height x target_width`` keeping its aspect ratio,
    then zero-padded (centred) to exactly that size."""
    with name_scope(None, "resize_image_with_pad"):
        image = convert_to_tensor(image, name="image")
        is_batch = image_rank(image, "resize_image_with_pad") == 4
        if not is_batch:
            image = array_ops.expand_dims(image, 0)
        for value, what in ((target_height, "target_height"), (target_width, "target_width")):
            if isinstance(value, int) and value <= 0:
                raise ValueError(f"{what} must be > 0.")
        dims = image.shape.as_list()
        shape = array_ops.shape(image)
        height = dims[1] if dims[1] is not None else shape[1]
        width = dims[2] if dims[2] is not None else shape[2]
        f_h, f_w = cast_ops.cast(height, dtypes.float32), cast_ops.cast(width, dtypes.float32)
        f_th, f_tw = cast_ops.cast(target_height, dtypes.float32), cast_ops.cast(target_width, dtypes.float32)
        ratio = math_ops.maximum(f_w / f_tw, f_h / f_th)
        rh_f, rw_f = f_h / ratio, f_w / ratio
        resized_h = cast_ops.cast(math_ops.floor(rh_f), dtypes.int32)
        resized_w = cast_ops.cast(math_ops.floor(rw_f), dtypes.int32)
        p_h = math_ops.maximum(0, cast_ops.cast(math_ops.floor((f_th - rh_f) / 2), dtypes.int32))
        p_w = math_ops.maximum(0, cast_ops.cast(math_ops.floor((f_tw - rw_f) / 2), dtypes.int32))
        resized = resize_images(image, array_ops.stack([resized_h, resized_w]), method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, p_h, p_w, target_height, target_width)
        if isinstance(target_height, int) and isinstance(target_width, int):
            padded.set_shape([dims[0], target_height, target_width, dims[3]])
        return padded if is_batch else array_ops.squeeze(padded, [0])


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``gain * image ** gamma`` on ``image`` scaled to [0, 1] (float16/float32 kept, other
    dtypes converted there and back with saturation); ``gamma`` must be >= 0."""
    with name_scope(None, "adjust_gamma"):
        image = convert_to_tensor(image, name="image")
        flt = image if image.dtype in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)
        if isinstance(gamma, (int, float)):
            if gamma < 0:
                raise ValueError("Gamma should be a non-negative real number.")
        else:
            gamma = convert_to_tensor(gamma, name="gamma")
            check = logging_ops.Assert(math_ops.greater_equal(gamma, 0),
                                       ["Gamma should be a non-negative real number."])
            with control_dependencies([check]):
                gamma = array_ops.identity(gamma)
        adjusted = gain * flt ** gamma
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def _mix(images: Any, matrix: list) -> Tensor:
    images = convert_to_tensor(images, name="images")
    kernel = convert_to_tensor(matrix, dtype=images.dtype, name="kernel")
    rank = images.shape.rank
    if rank is None:
        raise InvalidArgumentError("colour space conversion needs images of known rank")
    return linalg_ops.tensordot(images, kernel, axes=[[rank - 1], [0]])


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB (in [0, 1]) to YIQ, by TensorFlow's matrix, over the last dimension."""
    return _mix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ to RGB."""
    return _mix(images, _YIQ_TO_RGB)


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB (in [0, 1]) to YUV, by TensorFlow's matrix, over the last dimension."""
    return _mix(images, _RGB_TO_YUV)


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV to RGB."""
    return _mix(images, _YUV_TO_RGB)


def adjust_jpeg_quality(image: Any, jpeg_quality: Any, dct_method: str = "", name: str | None = None) -> Tensor:
    """``image`` (``[h, w, 1 or 3]``) encoded as JPEG at ``jpeg_quality`` (0-100) and decoded
    again, in its own dtype."""
    with name_scope(name, "adjust_jpeg_quality"):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.rank is not None else None
        encoded = image_ops.encode_jpeg_variable_quality(convert_image_dtype(image, dtypes.uint8, saturate=True),
                                                         jpeg_quality)
        decoded = image_ops.decode_jpeg(encoded, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(decoded, image.dtype, saturate=True)


def random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int,
                        seed: int | None = None) -> Tensor:
    """:func:`adjust_jpeg_quality` at a quality drawn uniformly in
    ``[min_jpeg_quality, max_jpeg_quality)``."""
    if min(min_jpeg_quality, max_jpeg_quality) < 0 or max(min_jpeg_quality, max_jpeg_quality) > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_ops.random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)
