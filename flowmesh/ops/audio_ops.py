"""``tf.audio``: ``DecodeWav`` and ``EncodeWav``, 16-bit PCM WAV files as float32
``[samples, channels]`` audio (format in ``formats/wav.py``, kernels in
``kernels/audio_ops.py``)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op, make_tensor

DecodeWav = namedtuple("DecodeWav", ["audio", "sample_rate"])


def _rank(op_type: str, tensor: Tensor, rank: int, what: str) -> None:
    if tensor.shape.rank not in (None, rank):
        raise InvalidArgumentError(f"{op_type}: {what} must be rank {rank}, got shape {tensor.shape}")


def _decode_wav_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _rank("DecodeWav", inputs[0], 0, "contents")
    samples, channels = attrs["desired_samples"], attrs["desired_channels"]
    return [(dtypes.float32, TensorShape([None if samples == -1 else samples, None if channels == -1 else channels])),
            (dtypes.int32, TensorShape([]))]


def _encode_wav_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _rank("EncodeWav", inputs[0], 2, "audio")
    _rank("EncodeWav", inputs[1], 0, "sample_rate")
    return [(dtypes.string, TensorShape([]))]


register_op("DecodeWav", _decode_wav_shape, not_differentiable=True)
register_op("EncodeWav", _encode_wav_shape, not_differentiable=True)


def _count(op_type: str, name: str, value: int) -> int:
    value = int(value)
    if value < -1:
        raise InvalidArgumentError(f"{op_type}: {name} must be -1 (keep the file's) or >= 0, got {value}")
    return value


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1,
               name: str | None = None) -> DecodeWav:
    """Decodes a 16-bit PCM WAV file into float32 ``audio`` ``[samples, channels]`` in [-1, 1)
    and its int32 ``sample_rate`` (``tf.audio.decode_wav``).

    Args:
        contents: a scalar string tensor, the file's bytes.
        desired_channels: channels to return (-1: the file's); missing channels repeat the
            file's last channel, extra ones are dropped.
        desired_samples: samples to return (-1: the file's); shorter files are padded with 0.
        name: the op's name.

    Raises:
        InvalidArgumentError: a negative count other than -1, or (when run) contents that
            are not a 16-bit PCM WAV file.
    """
    attrs = {"desired_channels": _count("DecodeWav", "desired_channels", desired_channels),
             "desired_samples": _count("DecodeWav", "desired_samples", desired_samples)}
    contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    op = make_op("DecodeWav", [contents], attrs, name=name or "DecodeWav")
    return DecodeWav(*op.outputs)


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> Tensor:
    """Encodes float32 ``audio`` ``[samples, channels]`` (values in [-1, 1], clipped) at the
    int32 ``sample_rate`` as a 16-bit PCM WAV file (``tf.audio.encode_wav``)."""
    audio = convert_to_tensor(audio, dtype=dtypes.float32, name="audio")
    sample_rate = convert_to_tensor(sample_rate, dtype=dtypes.int32, name="sample_rate")
    return make_tensor("EncodeWav", [audio, sample_rate], {}, name=name or "EncodeWav")
