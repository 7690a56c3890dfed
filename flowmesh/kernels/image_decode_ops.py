"""Kernels of ``ops/image_decode_ops.py`` (GIF, BMP, WebP, cropped JPEG, JPEG header shape):
CPU kernels on scalar string tensors, decoding with Pillow and converting channels with
``kernels/image_codec.py``'s libpng rules."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.image_codec import (
    _jpeg_image,
    _open,
    _pil,
    _scalar_bytes,
    _tensor,
    _to_array,
    _with_dtype,
    convert_channels,
)

_JPEG_CHANNELS = {"L": 1, "RGB": 3, "YCbCr": 3, "CMYK": 4}


@kernel("DecodeGif", device_types=("CPU",))
def _decode_gif(ctx: KernelContext):
    def run(contents: Any) -> torch.Tensor:
        image = _open(ctx, _scalar_bytes(ctx, contents), "GIF")
        if image.format != "GIF":
            raise InvalidArgumentError(f"DecodeGif ({ctx.op.name}): the contents are a "
                                       f"{image.format} image, not a GIF; use tf.io.decode_image")
        frames = []
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
        return _tensor(np.stack(frames))
    return run


def _decode_as(ctx: KernelContext, fmt: str, channels: int):
    def run(contents: Any) -> torch.Tensor:
        image = _open(ctx, _scalar_bytes(ctx, contents), fmt)
        if image.format != fmt:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): the contents are a "
                                       f"{image.format} image, not {fmt}; use tf.io.decode_image")
        return convert_channels(_with_dtype(_to_array(image), False), channels)
    return run


@kernel("DecodeBmp", device_types=("CPU",))
def _decode_bmp(ctx: KernelContext):
    decode = _decode_as(ctx, "BMP", ctx.attr("channels", 0))
    return lambda contents: _tensor(decode(contents))


@kernel("DecodeWebP", device_types=("CPU",))
def _decode_webp(ctx: KernelContext):
    channels = ctx.attr("channels", 0)

    def run(contents: Any) -> torch.Tensor:
        image = _open(ctx, _scalar_bytes(ctx, contents), "WebP")
        if image.format != "WEBP":
            raise InvalidArgumentError(f"DecodeWebP ({ctx.op.name}): the contents are a "
                                       f"{image.format} image, not WebP; use tf.io.decode_image")
        frames = []
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            frames.append(convert_channels(_to_array(image), channels))
        return _tensor(np.stack(frames))
    return run


@kernel("DecodeAndCropJpeg", device_types=("CPU",))
def _decode_and_crop_jpeg(ctx: KernelContext):
    channels, ratio = ctx.attr("channels", 0), ctx.attr("ratio", 1)

    def run(contents: Any, window: Any) -> torch.Tensor:
        y, x, h, w = (int(v) for v in np.asarray(window.cpu() if hasattr(window, "cpu")
                                                 else window).reshape(-1))
        image = _jpeg_image(ctx, _scalar_bytes(ctx, contents), channels, ratio)
        array = _with_dtype(_to_array(image), False)
        height, width = array.shape[:2]
        if min(y, x, h, w) < 0 or y + h > height or x + w > width or h == 0 or w == 0:
            raise InvalidArgumentError(
                f"DecodeAndCropJpeg ({ctx.op.name}): crop window [y={y}, x={x}, height={h}, "
                f"width={w}] is not inside the {height}x{width} image")
        return _tensor(convert_channels(array, channels)[y:y + h, x:x + w])
    return run


@kernel("ExtractJpegShape", device_types=("CPU",))
def _extract_jpeg_shape(ctx: KernelContext):
    dtype = torch.int64 if ctx.attr("output_type").name == "int64" else torch.int32

    def run(contents: Any) -> torch.Tensor:
        data = _scalar_bytes(ctx, contents)
        try:
            image = _pil().open(io.BytesIO(data))
        except Exception as exc:  # Pillow raises many types for corrupt data
            raise InvalidArgumentError(f"ExtractJpegShape ({ctx.op.name}): the contents "
                                       f"({len(data)} bytes) are not a JPEG image: {exc}") from None
        if image.format != "JPEG" or image.mode not in _JPEG_CHANNELS:
            raise InvalidArgumentError(f"ExtractJpegShape ({ctx.op.name}): the contents are "
                                       f"not a JPEG image (format {image.format})")
        w, h = image.size
        return torch.tensor([h, w, _JPEG_CHANNELS[image.mode]], dtype=dtype)
    return run
