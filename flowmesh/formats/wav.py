"""16-bit PCM WAV files, as TensorFlow's ``wav_io`` reads and writes them (``tf.audio``).

Samples are float32 in [-1, 1): a 16-bit sample ``s`` reads as ``s / 32768``; a float ``x``
writes as ``round(x * 32768)`` (half away from zero) clamped to [-32768, 32767]. Reading
accepts a ``fmt `` chunk of 16 or 18 bytes, skips chunks other than ``data`` and checks the
header's byte rates; only 16-bit PCM is read.
"""

from __future__ import annotations

import struct

import numpy as np

_INT16_SCALE = float(1 << 15)


class WavError(ValueError):
    """The bytes are not a 16-bit PCM WAV file, or the samples cannot be written as one."""


def encode(audio: np.ndarray, sample_rate: int) -> bytes:
    """A WAV file holding ``audio`` (float ``[samples, channels]``) at ``sample_rate`` Hz.

    Raises:
        WavError: ``audio`` is not 2-D, or the rate or channel count does not fit the header.
    """
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim != 2:
        raise WavError(f"audio must be 2-dimensional [samples, channels], got shape {list(audio.shape)}")
    samples, channels = audio.shape
    if not 0 < channels <= 0xFFFF:
        raise WavError(f"audio must have between 1 and 65535 channels, got {channels}")
    if not 0 <= sample_rate <= 0xFFFFFFFF // (2 * channels):
        raise WavError(f"sample_rate {sample_rate} does not fit a WAV header with {channels} channels")
    scaled = audio * np.float32(_INT16_SCALE)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    data = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, channels,
                         sample_rate, sample_rate * channels * 2, channels * 2, 16, b"data", len(data))
    return header + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def take(self, size: int, what: str) -> bytes:
        if self.offset + size > len(self.data):
            raise WavError(f"WAV data is too short: reading {what} needs {size} bytes at offset {self.offset}, "
                           f"but the data is {len(self.data)} bytes")
        chunk = self.data[self.offset:self.offset + size]
        self.offset += size
        return chunk

    def value(self, fmt: str, what: str) -> int:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))[0]

    def expect(self, text: bytes) -> None:
        found = self.take(len(text), repr(text.decode()))
        if found != text:
            raise WavError(f"Header mismatch: Expected {text.decode()} but found {found.decode('latin-1')}")


def _read_format(reader: _Reader) -> tuple[int, int]:
    reader.expect(b"fmt ")
    size = reader.value("I", "the format chunk size")
    if size not in (16, 18):
        raise WavError(f"Bad format chunk size for WAV: Expected 16 or 18, but got {size}")
    audio_format = reader.value("H", "the audio format")
    if audio_format != 1:
        raise WavError(f"Bad audio format for WAV: Expected 1 (PCM), but got {audio_format}")
    channels = reader.value("H", "the channel count")
    sample_rate = reader.value("I", "the sample rate")
    bytes_per_second = reader.value("I", "the byte rate")
    bytes_per_sample = reader.value("H", "the block size")
    bits = reader.value("H", "the bits per sample")
    if size == 18:
        reader.take(2, "the format extension")
    if bits != 16:
        raise WavError(f"Can only read 16-bit WAV files, but received {bits}")
    if bytes_per_sample != (bits * channels + 7) // 8:
        raise WavError(f"Bad bytes per sample in WAV header: Expected {(bits * channels + 7) // 8} but got "
                       f"{bytes_per_sample}")
    if bytes_per_second != bytes_per_sample * sample_rate:
        raise WavError(f"Bad bytes per second in WAV header: Expected {bytes_per_sample * sample_rate} but got "
                       f"{bytes_per_second}")
    return channels, sample_rate


def decode(data: bytes) -> tuple[np.ndarray, int]:
    """The samples (float32 ``[samples, channels]``) and sample rate of a WAV file.

    Raises:
        WavError: the data is not a well-formed 16-bit PCM WAV file.
    """
    reader = _Reader(bytes(data))
    reader.expect(b"RIFF")
    reader.value("I", "the file size")
    reader.expect(b"WAVE")
    channels, sample_rate = _read_format(reader)
    samples: np.ndarray | None = None
    while reader.offset < len(reader.data):
        chunk_id = reader.take(4, "a chunk id")
        size = reader.value("I", "a chunk size")
        if size > 0x7FFFFFFF:
            raise WavError(f"WAV data chunk '{chunk_id.decode('latin-1')}' is too large: {size} bytes, but the "
                           f"limit is {0x7FFFFFFF}")
        if chunk_id != b"data":
            reader.offset += size
            continue
        if samples is not None:
            raise WavError("More than one data chunk found in WAV")
        count = size // (2 * channels) if channels else 0
        raw = reader.take(2 * count * channels, "the samples")
        samples = np.frombuffer(raw, dtype="<i2").astype(np.float32) / np.float32(_INT16_SCALE)
        reader.offset += size - len(raw)
    if samples is None:
        raise WavError("No data chunk found in WAV")
    return samples.reshape(-1, channels) if channels else samples.reshape(0, 0), sample_rate
