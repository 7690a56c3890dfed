"""``tf.signal`` beyond the transforms, composed from graph ops (so differentiable): ``frame``,
``overlap_and_add``, ``stft``, ``inverse_stft`` (+ ``inverse_stft_window_fn``), ``dct``/``idct``
(types 1-4 as in ``scipy.fftpack``, a cosine-matrix product over the last axis),
``linear_to_mel_weight_matrix``, ``mfccs_from_log_mel_spectrograms``, ``vorbis_window``.
Frame lengths and steps must be Python ints."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, range_ops, reduction_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.fft_ops import hann_window, irfft, rfft
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.segment_ops import unsorted_segment_sum


def _last_axis(axis: int, rank: int | None, what: str) -> None:
    if axis not in (-1, (rank or 0) - 1):
        raise InvalidArgumentError(f"{what}: flowmesh supports axis=-1 only, got {axis}")


def frame(signal: Any, frame_length: int, frame_step: int, pad_end: bool = False, pad_value: Any = 0,
          axis: int = -1, name: str | None = None) -> Tensor:
    """Frames ``[..., samples]`` into ``[..., frames, frame_length]`` windows ``frame_step`` apart."""
    with name_scope(name, "frame", [signal]):
        x = convert_to_tensor(signal)
        _last_axis(axis, x.shape.rank, "frame")
        length = array_ops.shape(x)[-1]
        if pad_end:
            frames = (length + frame_step - 1) // frame_step
            needed = math_ops.maximum((frames - 1) * frame_step + frame_length - length, 0)
            paddings = array_ops.concat([array_ops.zeros([x.shape.rank - 1, 2], dtypes.int32),
                                         array_ops.reshape(array_ops.stack([0, needed]), [1, 2])], 0)
            x = manip_ops.pad(x, paddings, constant_values=pad_value)
        else:
            frames = math_ops.maximum(0, 1 + (length - frame_length) // frame_step)
        starts = array_ops.expand_dims(range_ops.range(frames) * frame_step, 1)
        return gather(x, starts + range_ops.range(frame_length), axis=x.shape.rank - 1)


def overlap_and_add(signal: Any, frame_step: int, name: str | None = None) -> Tensor:
    """Sums ``[..., frames, frame_length]`` frames placed ``frame_step`` apart."""
    with name_scope(name, "overlap_and_add", [signal]):
        x = convert_to_tensor(signal)
        rank = x.shape.rank
        shape = array_ops.shape(x)
        frames, frame_length = shape[-2], shape[-1]
        out_len = (frames - 1) * frame_step + frame_length
        positions = array_ops.reshape(array_ops.expand_dims(range_ops.range(frames) * frame_step, 1)
                                      + range_ops.range(frame_length), [-1])
        moved = array_ops.transpose(x, [rank - 2, rank - 1, *range(rank - 2)])
        flat = array_ops.reshape(moved, array_ops.concat([[-1], shape[:-2]], 0))
        summed = unsorted_segment_sum(flat, positions, out_len)
        return array_ops.transpose(summed, [*range(1, rank - 1), 0])


def _fft_length(frame_length: int, fft_length: int | None) -> int:
    return fft_length or 2 ** int(math.ceil(math.log2(frame_length)))


def stft(signals: Any, frame_length: int, frame_step: int, fft_length: int | None = None,
         window_fn: Callable[..., Tensor] | None = hann_window, pad_end: bool = False,
         name: str | None = None) -> Tensor:
    """Short-time Fourier transform ``[..., frames, fft_length // 2 + 1]`` (complex)."""
    with name_scope(name, "stft", [signals]):
        x = convert_to_tensor(signals)
        framed = frame(x, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=x.dtype)
        return rfft(framed, [_fft_length(frame_length, fft_length)])


def inverse_stft(stfts: Any, frame_length: int, frame_step: int, fft_length: int | None = None,
                 window_fn: Callable[..., Tensor] | None = hann_window, name: str | None = None) -> Tensor:
    """The signal of an STFT: ``irfft`` of each frame, windowed, overlapped and added."""
    with name_scope(name, "inverse_stft", [stfts]):
        frames = irfft(convert_to_tensor(stfts), [_fft_length(frame_length, fft_length)])
        frames = frames[..., :frame_length]
        if window_fn is not None:
            frames = frames * window_fn(frame_length, dtype=frames.dtype)
        return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step: int, forward_window_fn: Callable[..., Tensor] = hann_window,
                           name: str | None = None) -> Callable[..., Tensor]:
    """A window for :func:`inverse_stft` that inverts ``forward_window_fn``'s overlap."""

    def window(frame_length: int, dtype: Any = dtypes.float32) -> Tensor:
        forward = forward_window_fn(frame_length, dtype=dtype)
        overlaps = -(-frame_length // frame_step)
        denom = manip_ops.pad(math_ops.square(forward), [[0, overlaps * frame_step - frame_length]])
        denom = reduction_ops.reduce_sum(array_ops.reshape(denom, [overlaps, frame_step]), 0, keepdims=True)
        denom = array_ops.reshape(manip_ops.tile(denom, [overlaps, 1]), [overlaps * frame_step])
        return forward / denom[:frame_length]

    return window


def _dct_matrix(kind: int, n: int, norm: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(the [n, n] cosine matrix M with y = x @ M, an input scale or None) of scipy's DCT."""
    i = np.arange(n)[:, None].astype(np.float64)  # input index
    k = np.arange(n)[None, :].astype(np.float64)  # output index
    pre = None
    if kind == 1:
        m = 2 * np.cos(np.pi * i * k / (n - 1))
        m[0, :], m[-1, :] = 1.0, (-1.0) ** k[0]
    elif kind == 2:
        m = 2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))
        if norm == "ortho":
            m = m * np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    elif kind == 3:
        m = 2 * np.cos(np.pi * i * (2 * k + 1) / (2 * n))
        m[0, :] = 1.0
        if norm == "ortho":
            pre = np.where(np.arange(n) == 0, 1 / np.sqrt(n), np.sqrt(2 / n) / 2)
    else:
        m = 2 * np.cos(np.pi * (2 * i + 1) * (2 * k + 1) / (4 * n))
        if norm == "ortho":
            m = m * np.sqrt(1 / (2 * n))
    return m, pre


def dct(input: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,  # noqa: A002
        name: str | None = None) -> Tensor:
    """Discrete cosine transform (types 1-4, ``norm`` None or ``"ortho"``) over the last axis."""
    if type not in (1, 2, 3, 4) or norm not in (None, "ortho") or (type == 1 and norm == "ortho"):
        raise ValueError(f"dct: unsupported type {type} / norm {norm!r} (types 1-4; ortho not for type 1)")
    with name_scope(name, "dct", [input]):
        x = convert_to_tensor(input)
        _last_axis(axis, x.shape.rank, "dct")
        if n is not None:
            x = _fit_last(x, int(n))
        size = x.shape.as_list()[-1]
        if size is None:
            raise InvalidArgumentError("dct needs a statically known last dimension (or n)")
        matrix, pre = _dct_matrix(type, size, norm)
        if pre is not None:
            x = x * constant(pre, dtype=x.dtype)
        shape = array_ops.shape(x)
        flat = matmul(array_ops.reshape(x, [-1, size]), constant(matrix, dtype=x.dtype))
        result = array_ops.reshape(flat, shape)
        result.set_shape(x.shape)  # the reshape by a dynamic shape alone would lose it
        return result


def _fit_last(x: Tensor, n: int) -> Tensor:
    size = x.shape.as_list()[-1]
    if size is not None and size < n:
        return manip_ops.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[0, n - size]])
    return x[..., :n]


def idct(input: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,  # noqa: A002
         name: str | None = None) -> Tensor:
    """The DCT of the inverse type (as TensorFlow: unnormalized results need a 1/(2N) scale)."""
    return dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, axis, norm, name or "idct")


def _hertz_to_mel(f: np.ndarray) -> np.ndarray:
    return 1127.0 * np.log1p(f / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129, sample_rate: float = 8000,
                                lower_edge_hertz: float = 125.0, upper_edge_hertz: float = 3800.0,
                                dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``[num_spectrogram_bins, num_mel_bins]`` triangular mel filters (TensorFlow's HTK mel scale)."""
    if not 0.0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2:
        raise ValueError(f"need 0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2, got "
                         f"{lower_edge_hertz}, {upper_edge_hertz}, {sample_rate}")
    linear = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(_hertz_to_mel(np.float64(lower_edge_hertz)), _hertz_to_mel(np.float64(upper_edge_hertz)),
                        num_mel_bins + 2)
    lower, center, upper = edges[:-2][None, :], edges[1:-1][None, :], edges[2:][None, :]
    weights = np.maximum(0.0, np.minimum((bins - lower) / (center - lower), (upper - bins) / (upper - center)))
    return constant(np.pad(weights, [[1, 0], [0, 0]]), dtype=dtype, name=name or "linear_to_mel_weight_matrix")


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> Tensor:
    """MFCCs: the unnormalized DCT-II of log-mel spectrograms scaled by ``1 / sqrt(2 * bins)``."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms)
        bins = x.shape.as_list()[-1]
        return dct(x, type=2) * float(1.0 / np.sqrt(2.0 * bins))


def vorbis_window(window_length: int, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``sin(pi / 2 * sin(pi * (n + 0.5) / N) ** 2)``."""
    with name_scope(name, "vorbis_window"):
        n = cast_ops.cast(range_ops.range(int(window_length)), dtype)
        inner = math_ops.sin(math.pi * (n + 0.5) / float(window_length))
        return math_ops.sin(0.5 * math.pi * math_ops.square(inner))
