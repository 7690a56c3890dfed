"""Kernels of the image decode/encode ops (``flowmesh/ops/image_ops.py``): CPU kernels on string
tensors (NumPy object arrays of ``bytes``). Decoding goes through Pillow; channel conversions
follow libpng/libjpeg as TensorFlow configures them (RGB to gray with libpng's fixed-point
0.299/0.587 weights, truncated, alpha stripped or filled with the maximum value, 16-bit samples stripped
to their high byte). PNG encoding (and decoding of 16-bit colour, which Pillow
reduces to 8 bits) is ``kernels/image_png.py``.
"""

from __future__ import annotations

import io
import zlib
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.image_png import decode_sixteen_bit, header, png_bytes


def _pil():
    from PIL import Image
    return Image


def _scalar_bytes(ctx: KernelContext, contents: Any) -> bytes:
    array = np.asarray(contents, dtype=object)
    if array.shape != ():
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): contents must be a scalar "
                                   f"string, got shape {list(array.shape)}")
    return bytes(array.item())


def _open(ctx: KernelContext, data: bytes, what: str) -> Any:
    image_mod = _pil()
    try:
        image = image_mod.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # Pillow raises many types for corrupt data
        raise InvalidArgumentError(
            f"{ctx.op.type} ({ctx.op.name}): the contents ({len(data)} bytes) are not a valid "
            f"{what} image: {exc}") from None
    return image


def _to_array(image: Any) -> np.ndarray:
    """The image's samples as ``[h, w, c]`` (uint8, or uint16 for 16-bit files)."""
    mode = image.mode
    if mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif mode == "PA":
        image = image.convert("RGBA")
    elif mode == "1":
        image = image.convert("L")
    elif mode in ("I", "I;16", "I;16B", "I;16L"):
        return np.asarray(image).astype(np.uint16)[:, :, None]
    elif mode == "CMYK":
        image = image.convert("RGB")
    array = np.asarray(image)
    return array[:, :, None] if array.ndim == 2 else array


def _gray(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(rgb.dtype)[..., None]


def convert_channels(array: np.ndarray, channels: int) -> np.ndarray:
    """``[h, w, c]`` to ``channels`` (0 keeps), as TensorFlow's libpng setup converts."""
    have = array.shape[-1]
    if channels in (0, have):
        return array
    top = np.iinfo(array.dtype).max
    color = array[..., :3] if have >= 3 else np.repeat(array[..., :1], 3, axis=-1)
    if channels == 1:
        return array[..., :1] if have <= 2 else _gray(array)
    if channels == 3:
        return color
    alpha = array[..., -1:] if have in (2, 4) else np.full(array.shape[:-1] + (1,), top, array.dtype)
    return np.concatenate([color, alpha], axis=-1)


def _with_dtype(array: np.ndarray, want_16: bool) -> np.ndarray:
    if want_16 and array.dtype == np.uint8:
        return array.astype(np.uint16) * 257
    if not want_16 and array.dtype == np.uint16:
        return (array >> 8).astype(np.uint8)
    return array


def _tensor(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array, copy=True, order="C"))


@kernel("DecodePng", device_types=("CPU",))
def _decode_png(ctx: KernelContext):
    channels = ctx.attr("channels", 0)
    want_16 = ctx.attr("dtype").name == "uint16"

    def run(contents: Any) -> torch.Tensor:
        data = _scalar_bytes(ctx, contents)
        info = header(data)
        if info is not None and info[2] == 16 and info[3] != 0:  # 16-bit colour: not Pillow
            try:
                array = decode_sixteen_bit(data)
            except (ValueError, zlib.error) as exc:
                raise InvalidArgumentError(f"DecodePng ({ctx.op.name}): the contents "
                                           f"({len(data)} bytes) are not a valid PNG image: "
                                           f"{exc}") from None
        else:
            array = _to_array(_open(ctx, data, "PNG"))
        return _tensor(_with_dtype(convert_channels(array, channels), want_16))
    return run


def _jpeg_image(ctx: KernelContext, data: bytes, channels: int, ratio: int) -> Any:
    image_mod = _pil()
    try:
        image = image_mod.open(io.BytesIO(data))
        if image.format == "JPEG":
            mode = {1: "L", 3: "RGB"}.get(channels, image.mode)
            w, h = image.size
            image.draft(mode, (max(1, w // ratio), max(1, h // ratio)) if ratio > 1 else None)
        image.load()
    except Exception as exc:  # Pillow raises many types for corrupt data
        raise InvalidArgumentError(
            f"{ctx.op.type} ({ctx.op.name}): the contents ({len(data)} bytes) are not a valid "
            f"JPEG image: {exc}") from None
    return image


@kernel("DecodeJpeg", device_types=("CPU",))
def _decode_jpeg(ctx: KernelContext):
    channels = ctx.attr("channels", 0)
    ratio = ctx.attr("ratio", 1)
    if channels == 4:
        raise InvalidArgumentError(f"DecodeJpeg ({ctx.op.name}): channels must be 0, 1 or 3")

    def run(contents: Any) -> torch.Tensor:
        image = _jpeg_image(ctx, _scalar_bytes(ctx, contents), channels, ratio)
        array = _with_dtype(_to_array(image), False)
        if array.shape[-1] in (2, 4):
            array = convert_channels(array, 1 if array.shape[-1] == 2 else 3)
        return _tensor(convert_channels(array, channels))
    return run


@kernel("DecodeImage", device_types=("CPU",))
def _decode_image(ctx: KernelContext):
    channels = ctx.attr("channels", 0)
    expand = ctx.attr("expand_animations", True)
    png = _decode_png(ctx)
    want_16 = ctx.attr("dtype").name == "uint16"

    def run(contents: Any) -> torch.Tensor:
        data = _scalar_bytes(ctx, contents)
        if header(data) is not None:
            return png(contents)
        out = decode_other(data)
        return out.to(torch.int32).mul(256).to(torch.uint16) if want_16 else out

    def decode_other(data: bytes) -> torch.Tensor:
        image = _open(ctx, data, "PNG, JPEG, GIF or BMP")
        if image.format == "GIF":
            frames = []
            for index in range(getattr(image, "n_frames", 1) if expand else 1):
                image.seek(index)
                frames.append(convert_channels(np.asarray(image.convert("RGB")), channels or 3))
            return _tensor(np.stack(frames) if expand else frames[0])
        if image.format == "JPEG":
            image = _jpeg_image(ctx, data, channels, 1)
        return _tensor(convert_channels(_with_dtype(_to_array(image), False), channels))
    return run


def _checked_image(ctx: KernelContext, image: Any, allowed: tuple[int, ...]) -> np.ndarray:
    array = image.numpy() if isinstance(image, torch.Tensor) else np.asarray(image)
    if array.ndim != 3 or array.shape[-1] not in allowed or 0 in array.shape:
        raise InvalidArgumentError(
            f"{ctx.op.type} ({ctx.op.name}): image must be 3-D [height, width, channels] with "
            f"channels in {list(allowed)} and no empty dimension, got shape {list(array.shape)}")
    return array


@kernel("EncodePng", device_types=("CPU",))
def _encode_png(ctx: KernelContext):
    compression = ctx.attr("compression", -1)

    def run(image: Any) -> np.ndarray:
        array = _checked_image(ctx, image, (1, 2, 3, 4))
        return np.array(png_bytes(array, compression), dtype=object)
    return run


@kernel("EncodeJpeg", device_types=("CPU",))
def _encode_jpeg(ctx: KernelContext):
    options = {"quality": ctx.attr("quality", 95), "progressive": ctx.attr("progressive", False),
               "optimize": ctx.attr("optimize_size", False),
               "subsampling": 2 if ctx.attr("chroma_downsampling", True) else 0}
    forced = {"grayscale": 1, "rgb": 3}.get(ctx.attr("format", ""))

    def run(image: Any) -> np.ndarray:
        array = _checked_image(ctx, image, (1, 3))
        if forced is not None and forced != array.shape[-1]:
            raise InvalidArgumentError(f"EncodeJpeg ({ctx.op.name}): format "
                                       f"{ctx.attr('format')!r} needs {forced} channels, got "
                                       f"shape {list(array.shape)}")
        pil = _pil().fromarray(array[..., 0] if array.shape[-1] == 1 else array)
        out = io.BytesIO()
        pil.save(out, format="JPEG", **options)
        return np.array(out.getvalue(), dtype=object)
    return run


@kernel("EncodeJpegVariableQuality", device_types=("CPU",))
def _encode_jpeg_variable_quality(ctx: KernelContext):
    def run(image: Any, quality: Any) -> np.ndarray:
        array = _checked_image(ctx, image, (1, 3))
        value = int(quality)
        if not 0 <= value <= 100:
            raise InvalidArgumentError(f"EncodeJpegVariableQuality ({ctx.op.name}): quality must be in "
                                       f"[0, 100], got {value}")
        pil = _pil().fromarray(array[..., 0] if array.shape[-1] == 1 else array)
        out = io.BytesIO()
        pil.save(out, format="JPEG", quality=value, subsampling=2)
        return np.array(out.getvalue(), dtype=object)
    return run
