"""Kernels of ``ops/summary_media_ops.py``: images to PNG (``kernels/image_png.py``) and clips to
16-bit little-endian WAV, as TensorFlow's ``ImageSummary`` / ``AudioSummaryV2`` kernels do."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.image_png import png_bytes
from flowmesh.kernels.summary_ops import _bytes_scalar, _text
from flowmesh.protos.summary import Summary, SummaryAudio, SummaryImage, SummaryMetadata, SummaryValue

_ZERO = np.float32(1e-6)


def _tags(tag: str, kind: str, count: int, max_outputs: int) -> list[str]:
    if max_outputs == 1:
        return [f"{tag}/{kind}"][:count]
    return [f"{tag}/{kind}/{i}" for i in range(count)]


def normalize_float_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TensorFlow's ``NormalizeFloatImage``: ``[h, w, c]`` floats to uint8 (finite range to
    0-255, or around 128 with negatives; pixels with a non-finite channel to ``bad_color``)."""
    values = image.astype(np.float32)
    finite = np.isfinite(values).all(axis=-1)
    seen = values[finite]
    low = np.float32(seen.min()) if seen.size else np.float32(np.inf)
    high = np.float32(seen.max()) if seen.size else np.float32(-np.inf)
    if low < 0:
        top = max(abs(low), abs(high))
        scale, offset = np.float32(0.0 if top < _ZERO else 127.0 / top), np.float32(128.0)
    else:
        scale, offset = np.float32(0.0 if high < _ZERO else 255.0 / high), np.float32(0.0)
    out = np.zeros(values.shape, np.uint8)
    out[finite] = (values[finite] * scale + offset).astype(np.uint8)
    out[~finite] = bad_color[:values.shape[-1]]
    return out


@kernel("ImageSummary", device_types=("CPU",))
def _image_summary(ctx: KernelContext):
    max_images = ctx.attr("max_images", 3)
    bad_color = np.asarray(ctx.attr("bad_color", [255, 0, 0, 255]), np.uint8)

    def run(tag: Any, tensor: Any) -> np.ndarray:
        images = np.asarray(to_numpy(tensor, copy=False))
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise InvalidArgumentError(f"ImageSummary ({ctx.op.name}): tensor must be 4-D [batch, "
                                       f"height, width, channels] with 1, 3 or 4 channels, got "
                                       f"shape {list(images.shape)}")
        count = min(images.shape[0], max_images)
        values = []
        for name, pixels in zip(_tags(_text(np.asarray(tag, dtype=object)[()]), "image", count,
                                      max_images), images[:count]):
            if pixels.dtype != np.uint8:
                pixels = normalize_float_image(pixels, bad_color)
            h, w, c = pixels.shape
            encoded = SummaryImage(height=h, width=w, colorspace=c,
                                   encoded_image_string=png_bytes(pixels, -1))
            values.append(SummaryValue(tag=name, image=encoded))
        return _bytes_scalar(Summary(value=values).SerializeToString())
    return run


def wav_bytes(clip: np.ndarray, sample_rate: int) -> bytes:
    """``[frames, channels]`` floats as a 16-bit PCM WAV file (TensorFlow's
    ``EncodeAudioAsS16LEWav``: samples x 32768 rounded half away from zero, clamped)."""
    frames, channels = clip.shape
    scaled = clip.astype(np.float32) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    samples = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(samples), b"WAVE", b"fmt ", 16, 1,
                         channels, sample_rate, sample_rate * channels * 2, channels * 2, 16,
                         b"data", len(samples))
    return header + samples


@kernel("AudioSummaryV2", device_types=("CPU",))
def _audio_summary(ctx: KernelContext):
    max_outputs = ctx.attr("max_outputs", 3)

    def run(tag: Any, tensor: Any, sample_rate: Any) -> np.ndarray:
        clips = np.asarray(to_numpy(tensor, copy=False), np.float32)
        rate = float(np.asarray(to_numpy(sample_rate, copy=False)))
        if clips.ndim not in (2, 3) or rate <= 0:
            raise InvalidArgumentError(f"AudioSummaryV2 ({ctx.op.name}): tensor must be [batch, "
                                       f"frames(, channels)] and sample_rate > 0, got shape "
                                       f"{list(clips.shape)} and rate {rate}")
        clips = clips[..., None] if clips.ndim == 2 else clips
        count = min(clips.shape[0], max_outputs)
        values = []
        for name, clip in zip(_tags(_text(np.asarray(tag, dtype=object)[()]), "audio", count,
                                    max_outputs), clips[:count]):
            encoded = SummaryAudio(sample_rate=rate, num_channels=clip.shape[1],
                                   length_frames=clip.shape[0], content_type="audio/wav",
                                   encoded_audio_string=wav_bytes(clip, int(rate)))
            values.append(SummaryValue(tag=name, audio=encoded))
        return _bytes_scalar(Summary(value=values).SerializeToString())
    return run


@kernel("TensorSummaryV2", device_types=("CPU",))
def _tensor_summary(ctx: KernelContext):
    from flowmesh.core.graph_def import make_tensor_proto
    dtype = ctx.op.inputs[1].dtype

    def run(tag: Any, tensor: Any, metadata: Any) -> np.ndarray:
        array = np.asarray(to_numpy(tensor, dtype), dtype=object if dtype.name == "string" else None)
        value = SummaryValue(tag=_text(np.asarray(tag, dtype=object)[()]),
                             metadata=SummaryMetadata.FromString(np.asarray(metadata, dtype=object)[()]),
                             tensor=make_tensor_proto(array, dtype=dtype))
        return _bytes_scalar(Summary(value=[value]).SerializeToString())
    return run
