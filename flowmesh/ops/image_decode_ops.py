"""More of TensorFlow's image codec ops: ``DecodeGif``, ``DecodeBmp``, ``DecodeWebP``,
``DecodeAndCropJpeg`` and ``ExtractJpegShape`` (``tf.io.decode_*``), kernels in
``kernels/image_decode_ops.py`` (Pillow, with ``kernels/image_codec.py``'s channel rules).
``is_jpeg`` compares the first three bytes, as TensorFlow's Python does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.math_ops import equal
from flowmesh.ops.string_ops import substr


def _scalar_input(op_type: str, inputs: Sequence[Tensor]) -> None:
    if inputs[0].shape.rank not in (None, 0):
        raise InvalidArgumentError(f"{op_type}: contents must be a scalar string, got shape "
                                   f"{inputs[0].shape}")


def _image_shape(op_type: str, rank: int, fixed_channels: int | None = None):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        _scalar_input(op_type, inputs)
        channels = fixed_channels or attrs.get("channels", 0) or None
        return [(attrs.get("dtype", dtypes.uint8), TensorShape([None] * (rank - 1) + [channels]))]
    return shape_fn


def _jpeg_shape_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _scalar_input("ExtractJpegShape", inputs)
    return [(attrs["output_type"], TensorShape([3]))]


register_op("DecodeGif", _image_shape("DecodeGif", 4, 3), not_differentiable=True)
register_op("DecodeBmp", _image_shape("DecodeBmp", 3), not_differentiable=True)
register_op("DecodeWebP", _image_shape("DecodeWebP", 4), not_differentiable=True)
register_op("DecodeAndCropJpeg", _image_shape("DecodeAndCropJpeg", 3), not_differentiable=True)
register_op("ExtractJpegShape", _jpeg_shape_shape, not_differentiable=True)


def _contents(contents: Any) -> Tensor:
    return convert_to_tensor(contents, dtype=dtypes.string, name="contents")


def _channels(op_type: str, channels: int, allowed: tuple[int, ...]) -> int:
    if channels not in allowed:
        raise InvalidArgumentError(f"{op_type}: channels must be one of {list(allowed)}, got "
                                   f"{channels}")
    return int(channels)


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """A GIF's frames as ``uint8`` ``[num_frames, height, width, 3]`` (``tf.io.decode_gif``);
    each frame is the composed canvas, as TensorFlow's decoder gives it."""
    return make_tensor("DecodeGif", [_contents(contents)], {}, name=name or "DecodeGif")


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Tensor:
    """A BMP image as ``uint8`` ``[height, width, channels]`` (``tf.io.decode_bmp``);
    ``channels`` 0 keeps the file's (1, 3 or 4), 3 or 4 convert."""
    attrs = {"channels": _channels("DecodeBmp", channels, (0, 3, 4))}
    return make_tensor("DecodeBmp", [_contents(contents)], attrs, name=name or "DecodeBmp")


def decode_webp(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8,
                name: str | None = None) -> Tensor:
    """A WebP image's frames as ``uint8`` ``[num_frames, height, width, channels]``
    (``tf.io.decode_webp``); ``channels`` 0 keeps the file's (3, or 4 with alpha), 3 or 4
    convert (TensorFlow requires the file's count; flowmesh converts as ``decode_png``)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.uint8:
        raise TypeError(f"DecodeWebP: dtype must be uint8, got {dtype.name}")
    attrs = {"channels": _channels("DecodeWebP", channels, (0, 3, 4)), "dtype": dtype}
    return make_tensor("DecodeWebP", [_contents(contents)], attrs, name=name or "DecodeWebP")


def decode_and_crop_jpeg(contents: Any, crop_window: Any, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1, dct_method: str = "",
                         name: str | None = None) -> Tensor:
    """The window ``crop_window = [y, x, height, width]`` of a JPEG image, as ``uint8``
    ``[height, width, channels]`` (``tf.io.decode_and_crop_jpeg``).

    Raises:
        InvalidArgumentError (at run time): the window is not inside the image.
    """
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(f"DecodeAndCropJpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    window = convert_to_tensor(crop_window, dtype=dtypes.int32, name="crop_window")
    if window.shape.rank is not None and window.shape.as_list() != [4]:
        raise InvalidArgumentError(f"DecodeAndCropJpeg: crop_window must be [4] = [y, x, height, "
                                   f"width], got shape {window.shape}")
    attrs = {"channels": _channels("DecodeAndCropJpeg", channels, (0, 1, 3)), "ratio": int(ratio),
             "fancy_upscaling": fancy_upscaling, "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    return make_tensor("DecodeAndCropJpeg", [_contents(contents), window], attrs,
                       name=name or "DecodeAndCropJpeg")


def extract_jpeg_shape(contents: Any, output_type: Any = dtypes.int32,
                       name: str | None = None) -> Tensor:
    """``[height, width, channels]`` of a JPEG image, read from its header without decoding
    (``tf.io.extract_jpeg_shape``)."""
    output_type = dtypes.as_dtype(output_type)
    if output_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"ExtractJpegShape: output_type must be int32 or int64, got "
                        f"{output_type.name}")
    return make_tensor("ExtractJpegShape", [_contents(contents)], {"output_type": output_type},
                       name=name or "ExtractJpegShape")


def is_jpeg(contents: Any, name: str | None = None) -> Tensor:
    """True when ``contents`` starts with JPEG's ``FF D8 FF`` (``tf.io.is_jpeg``)."""
    from flowmesh.core.graph import name_scope

    with name_scope(name or "is_jpeg"):
        return equal(substr(_contents(contents), 0, 3), b"\xff\xd8\xff", name="is_jpeg")
