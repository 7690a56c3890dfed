"""``tf.summary.image`` and ``tf.summary.audio``: ``ImageSummary`` (PNG-encoded images, float
images rescaled as TensorFlow's kernel does) and ``AudioSummaryV2`` (16-bit WAV clips); kernels
in ``kernels/summary_media_ops.py``. Tags are ``<tag>/image/<i>`` (``<tag>/image`` when
``max_outputs`` is 1), likewise ``/audio``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.summary_ops import _collect, summary_scope

_IMAGE_DTYPES = (dtypes.uint8, dtypes.float16, dtypes.float32, dtypes.float64)


def _image_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = inputs[1].shape
    if shape.rank is not None and (shape.rank != 4 or shape.as_list()[-1] not in (None, 1, 3, 4)):
        raise ValueError(f"ImageSummary: tensor must be 4-D [batch, height, width, channels] with "
                         f"1, 3 or 4 channels, got shape {shape}")
    return [(dtypes.string, TensorShape([]))]


def _audio_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = inputs[1].shape
    if shape.rank not in (None, 2, 3):
        raise ValueError(f"AudioSummaryV2: tensor must be [batch, frames] or [batch, frames, "
                         f"channels], got shape {shape}")
    if inputs[2].shape.rank not in (None, 0):
        raise ValueError(f"AudioSummaryV2: sample_rate must be a scalar, got {inputs[2].shape}")
    return [(dtypes.string, TensorShape([]))]


register_op("ImageSummary", _image_shape, not_differentiable=True)
register_op("AudioSummaryV2", _audio_shape, not_differentiable=True)


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Sequence[str] | None = None,
          family: str | None = None) -> Tensor:
    """Up to ``max_outputs`` images of a batch as PNG images (``tf.summary.image``).

    ``tensor`` is ``uint8`` or float ``[batch, height, width, channels]`` (1, 3 or 4
    channels); float images are scaled to 0-255 (non-negative: by 255 / max; else by
    127 / max |x| around 128), non-finite pixels drawn in red.

    Returns:
        A scalar string tensor: a serialized ``tf.Summary``.
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        images = convert_to_tensor(tensor, name="tensor")
        if images.dtype.base_dtype not in _IMAGE_DTYPES:
            raise TypeError(f"tf.summary.image('{name}'): tensor must be uint8 or float, got "
                            f"{images.dtype.name}")
        tag_t = convert_to_tensor(tag, dtype=dtypes.string, name="tag")
        out = make_tensor("ImageSummary", [tag_t, images],
                          {"T": images.dtype, "max_images": int(max_outputs),
                           "bad_color": [255, 0, 0, 255]}, name=scope)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def audio(name: str, tensor: Any, sample_rate: Any, max_outputs: int = 3,
          collections: Sequence[str] | None = None, family: str | None = None) -> Tensor:
    """Up to ``max_outputs`` clips of a batch as 16-bit WAV audio (``tf.summary.audio``).

    ``tensor`` is float ``[batch, frames]`` or ``[batch, frames, channels]`` in [-1, 1];
    ``sample_rate`` is in Hz.

    Returns:
        A scalar string tensor: a serialized ``tf.Summary``.
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        clips = convert_to_tensor(tensor, dtype=dtypes.float32, name="tensor")
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        tag_t = convert_to_tensor(tag, dtype=dtypes.string, name="tag")
        out = make_tensor("AudioSummaryV2", [tag_t, clips, rate],
                          {"max_outputs": int(max_outputs)}, name=scope)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out
