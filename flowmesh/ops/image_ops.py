"""Image graph ops: PNG/JPEG decoding and encoding (string tensors holding bytes) and the
``Resize*`` family with TensorFlow 1.x's ``align_corners`` / ``half_pixel_centers`` math.

The composite ``tf.image`` functions (crops, flips, colour adjustments) live in
``flowmesh/image/`` and build on these and on the array/math ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype, constant_value, make_tensor
from flowmesh.ops.array_ops import shape as shape_op
from flowmesh.ops.strided_slice_ops import strided_slice

_DECODE_CHANNELS = (0, 1, 3, 4)


def _decode_shape(op_type: str, rank: int | None):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        shape = inputs[0].shape
        if shape.rank not in (None, 0):
            raise InvalidArgumentError(
                f"{op_type}: contents must be a scalar string, got shape {shape}")
        if rank is None:
            return [(attrs["dtype"], TensorShape(None))]
        return [(attrs["dtype"], TensorShape([None, None, attrs.get("channels", 0) or None]))]
    return shape_fn


def _encode_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = inputs[0].shape
    if shape.rank not in (None, 3):
        raise InvalidArgumentError(f"EncodePng/EncodeJpeg: image must be 3-dimensional "
                                   f"[height, width, channels], got shape {shape}")
    return [(dtypes.string, TensorShape([]))]


register_op("DecodePng", _decode_shape("DecodePng", 3), not_differentiable=True)
register_op("DecodeJpeg", _decode_shape("DecodeJpeg", 3), not_differentiable=True)
register_op("DecodeImage", _decode_shape("DecodeImage", None), not_differentiable=True)
register_op("EncodePng", _encode_shape, not_differentiable=True)
register_op("EncodeJpeg", _encode_shape, not_differentiable=True)
register_op("EncodeJpegVariableQuality", _encode_shape, not_differentiable=True)


def _resize_shape(op_type: str, out_dtype: Any):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        images, size = inputs
        if images.shape.rank not in (None, 4):
            raise InvalidArgumentError(
                f"{op_type}: images must be 4-dimensional [batch, height, width, channels], "
                f"got shape {images.shape}")
        if size.shape.rank not in (None, 1) or size.shape.as_list() not in (None, [None], [2]):
            raise InvalidArgumentError(
                f"{op_type}: size must be a 1-D int32 tensor of 2 elements (new_height, "
                f"new_width), got shape {size.shape}")
        if attrs.get("align_corners") and attrs.get("half_pixel_centers"):
            raise InvalidArgumentError(f"{op_type}: If half_pixel_centers is True, "
                                       "align_corners must be False.")
        value = constant_value(size)
        hw = [None, None] if value is None else [int(v) for v in value]
        if value is not None and min(hw) <= 0:
            raise InvalidArgumentError(f"{op_type}: output dimensions must be positive, got {hw}")
        batch, channels = (None, None) if images.shape.rank is None else (
            images.shape[0], images.shape[3])
        return [(out_dtype or images.dtype, TensorShape([batch, *hw, channels]))]
    return shape_fn


def _grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[1].dtype, inputs[1].shape)]


def _nn_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    value = constant_value(inputs[1])
    hw = [None, None] if value is None else [int(v) for v in value]
    grads = inputs[0].shape
    batch, channels = (None, None) if grads.rank is None else (grads[0], grads[3])
    return [(inputs[0].dtype, TensorShape([batch, *hw, channels]))]


def _attrs_of(op: Any) -> dict[str, Any]:
    return {"align_corners": op.attrs["align_corners"],
            "half_pixel_centers": op.attrs["half_pixel_centers"]}


def _linear_grad(grad_op: str):
    def grad(op: Any, g: Tensor) -> list:
        return [make_tensor(grad_op, [g, op.inputs[0]], _attrs_of(op), name=grad_op), None]
    return grad


def _nn_grad(op: Any, g: Tensor) -> list:
    size = strided_slice(shape_op(op.inputs[0]), [1], [3], [1])
    return [make_tensor("ResizeNearestNeighborGrad", [g, size], _attrs_of(op),
                        name="ResizeNearestNeighborGrad"), None]


register_op("ResizeBilinear", _resize_shape("ResizeBilinear", dtypes.float32),
            grad=_linear_grad("ResizeBilinearGrad"))
register_op("ResizeBicubic", _resize_shape("ResizeBicubic", dtypes.float32),
            grad=_linear_grad("ResizeBicubicGrad"))
register_op("ResizeArea", _resize_shape("ResizeArea", dtypes.float32), not_differentiable=True)
register_op("ResizeNearestNeighbor", _resize_shape("ResizeNearestNeighbor", None), grad=_nn_grad)
register_op("ResizeBilinearGrad", _grad_shape, not_differentiable=True)
register_op("ResizeBicubicGrad", _grad_shape, not_differentiable=True)
register_op("ResizeNearestNeighborGrad", _nn_grad_shape, not_differentiable=True)


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8,
               name: str | None = None) -> Tensor:
    """A PNG-encoded image as a ``uint8``/``uint16`` tensor ``[height, width, channels]``
    (``tf.image.decode_png``); ``channels`` 0 keeps the file's, 1/3/4 convert."""
    return _decode("DecodePng", contents, channels, {"dtype": dtypes.as_dtype(dtype)}, name)


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1.0,
                dct_method: str = "", name: str | None = None) -> Tensor:
    """A JPEG-encoded image as a ``uint8`` tensor ``[height, width, channels]``
    (``tf.image.decode_jpeg``); ``ratio`` (1, 2, 4, 8) downscales while decoding."""
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"DecodeJpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    attrs = {"dtype": dtypes.uint8, "ratio": int(ratio), "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    return _decode("DecodeJpeg", contents, channels, attrs, name)


def decode_image_bytes(contents: Any, channels: int = 0, expand_animations: bool = True,
                       name: str | None = None, dtype: Any = dtypes.uint8) -> Tensor:
    """The ``DecodeImage`` op: PNG, JPEG, GIF or BMP bytes as ``uint8``/``uint16`` pixels
    (rank 3, or rank 4 for an animated GIF when ``expand_animations``; 16-bit PNG samples kept,
    other formats scaled by 256); ``tf.image.decode_image`` adds float conversion."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "expand_animations": bool(expand_animations)}
    return _decode("DecodeImage", contents, channels or 0, attrs, name)


def _decode(op_type: str, contents: Any, channels: int, attrs: dict[str, Any],
            name: str | None) -> Tensor:
    if channels not in _DECODE_CHANNELS:
        raise InvalidArgumentError(f"{op_type}: channels must be 0, 1, 3 or 4, got {channels}")
    if attrs["dtype"] not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"{op_type}: dtype must be uint8 or uint16, got {attrs['dtype'].name}")
    tensor = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    return make_tensor(op_type, [tensor], {"channels": int(channels), **attrs},
                       name=name or op_type)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """A ``uint8``/``uint16`` image ``[height, width, channels]`` (1-4 channels) as PNG bytes
    (``tf.image.encode_png``); ``compression`` -1 (default) or 0-9."""
    tensor = convert_to_tensor(image, name="image")
    check_dtype("EncodePng", tensor, (dtypes.uint8, dtypes.uint16), "image")
    if not -1 <= int(compression) <= 9:
        raise InvalidArgumentError(f"EncodePng: compression must be in [-1, 9], got {compression}")
    return make_tensor("EncodePng", [tensor], {"compression": int(compression)},
                       name=name or "EncodePng")


def encode_jpeg(image: Any, format: str = "", quality: int = 95,  # noqa: A002 - TF's name
                progressive: bool = False, optimize_size: bool = False,
                chroma_downsampling: bool = True, name: str | None = None, **_: Any) -> Tensor:
    """A ``uint8`` image ``[height, width, 1 or 3]`` as JPEG bytes (``tf.image.encode_jpeg``)."""
    tensor = convert_to_tensor(image, name="image")
    check_dtype("EncodeJpeg", tensor, (dtypes.uint8,), "image")
    attrs = {"format": format, "quality": int(quality), "progressive": progressive,
             "optimize_size": optimize_size, "chroma_downsampling": chroma_downsampling}
    return make_tensor("EncodeJpeg", [tensor], attrs, name=name or "EncodeJpeg")


def encode_jpeg_variable_quality(images: Any, quality: Any, name: str | None = None) -> Tensor:
    """A ``uint8`` image ``[height, width, 1 or 3]`` as JPEG bytes at a ``quality`` (0-100)
    given as a tensor (``EncodeJpegVariableQuality``, used by ``tf.image.adjust_jpeg_quality``)."""
    tensor = convert_to_tensor(images, name="images")
    check_dtype("EncodeJpegVariableQuality", tensor, (dtypes.uint8,), "images")
    quality_t = convert_to_tensor(quality, dtype=dtypes.int32, name="quality")
    return make_tensor("EncodeJpegVariableQuality", [tensor, quality_t], name=name or "EncodeJpegVariableQuality")


def _resize(op_type: str, images: Any, size: Any, align_corners: bool,
            half_pixel_centers: bool, name: str | None) -> Tensor:
    tensor = convert_to_tensor(images, name="images")
    check_dtype(op_type, tensor, REAL_NUMERIC, "images")
    size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    if op_type == "ResizeArea":
        del attrs["half_pixel_centers"]
    return make_tensor(op_type, [tensor, size_t], attrs, name=name or op_type)


def resize_bilinear(images: Any, size: Any, align_corners: bool = False,
                    half_pixel_centers: bool = False, name: str | None = None) -> Tensor:
    """Bilinear resize of ``[batch, h, w, c]`` images to ``size`` (float32 result)."""
    return _resize("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False,
                            half_pixel_centers: bool = False, name: str | None = None) -> Tensor:
    """Nearest-neighbour resize of ``[batch, h, w, c]`` images (keeps the dtype)."""
    return _resize("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images: Any, size: Any, align_corners: bool = False,
                   half_pixel_centers: bool = False, name: str | None = None) -> Tensor:
    """Bicubic resize (TensorFlow's tabulated kernel: a=-0.75, or Keys a=-0.5 with
    ``half_pixel_centers``) of ``[batch, h, w, c]`` images (float32 result)."""
    return _resize("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images: Any, size: Any, align_corners: bool = False,
                name: str | None = None) -> Tensor:
    """Area (box-average) resize of ``[batch, h, w, c]`` images (float32 result)."""
    return _resize("ResizeArea", images, size, align_corners, False, name)
