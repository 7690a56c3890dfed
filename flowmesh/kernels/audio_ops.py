"""Kernels of ``ops/audio_ops.py``: WAV files through ``formats/wav.py``, on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.formats import wav
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _fit(audio: np.ndarray, samples: int, channels: int) -> np.ndarray:
    """TensorFlow's ``DecodeWav`` output: zero-padded or cut to ``samples``; missing
    channels repeat the file's last one."""
    have_samples, have_channels = audio.shape
    out = np.zeros((samples, channels), dtype=np.float32)
    if have_channels == 0:
        return out
    source = np.minimum(np.arange(channels), have_channels - 1)
    rows = min(samples, have_samples)
    out[:rows] = audio[:rows][:, source]
    return out


@kernel("DecodeWav", device_types=("CPU",))
def _decode_wav(ctx: KernelContext):
    want_channels = ctx.attr("desired_channels", -1)
    want_samples = ctx.attr("desired_samples", -1)

    def run(contents: Any) -> tuple[torch.Tensor, torch.Tensor]:
        array = np.asarray(contents, dtype=object)
        if array.shape != ():
            raise InvalidArgumentError(f"DecodeWav ({ctx.op.name}): contents must be a scalar string, got "
                                       f"shape {list(array.shape)}")
        try:
            audio, rate = wav.decode(bytes(array.item()))
        except wav.WavError as error:
            raise InvalidArgumentError(f"DecodeWav ({ctx.op.name}): {error}") from None
        samples = audio.shape[0] if want_samples == -1 else want_samples
        channels = audio.shape[1] if want_channels == -1 else want_channels
        if rate > np.iinfo(np.int32).max:
            raise InvalidArgumentError(f"DecodeWav ({ctx.op.name}): sample rate {rate} is too large for int32")
        return torch.from_numpy(_fit(audio, samples, channels)), torch.tensor(rate, dtype=torch.int32)

    return run


@kernel("EncodeWav", device_types=("CPU",))
def _encode_wav(ctx: KernelContext):
    def run(audio: torch.Tensor, sample_rate: torch.Tensor) -> np.ndarray:
        if sample_rate.dim() != 0:
            raise InvalidArgumentError(f"EncodeWav ({ctx.op.name}): sample_rate must be a scalar, got shape "
                                       f"{list(sample_rate.shape)}")
        try:
            data = wav.encode(audio.detach().cpu().numpy(), int(sample_rate))
        except wav.WavError as error:
            raise InvalidArgumentError(f"EncodeWav ({ctx.op.name}): {error}") from None
        return np.array(data, dtype=object)

    return run
