"""The modified discrete cosine transform ``mdct`` / ``inverse_mdct`` and the Kaiser
windows (``kaiser_window``, ``kaiser_bessel_derived_window``), composed from framing, the
type-4 DCT and ``bessel_i0e`` exactly as TensorFlow's ``mdct_ops.py`` / ``window_ops.py``
compose them (gradients come from the composition)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.bessel_ops import bessel_i0e
from flowmesh.ops.spectral_ops import dct, frame, overlap_and_add, vorbis_window


def _static_int(value: Any, what: str) -> int:
    v = value if isinstance(value, (int, np.integer)) else constant_value(convert_to_tensor(value))
    if v is None:
        raise ValueError(f"{what} must be known when the graph is built, got {value!r}")
    return int(v)


def mdct(signals: Any, frame_length: Any, window_fn: Callable[..., Any] | None = vorbis_window,
         pad_end: bool = False, norm: str | None = None, name: str | None = None) -> Tensor:
    """The MDCT of ``[..., samples]`` real signals: ``[..., frames, frame_length // 2]``.

    Frames overlap by half (``frame_step = frame_length // 2``) and are windowed by
    ``window_fn`` (``None``: scaled by ``1/sqrt(2)``).

    Raises:
        ValueError: when ``frame_length`` is not a multiple of 4.
    """
    with name_scope(name, "mdct", [signals]):
        x = convert_to_tensor(signals, name="signals")
        length = _static_int(frame_length, "mdct: frame_length")
        if length % 4:
            raise ValueError(f"mdct: the frame length must be a multiple of 4, got {length}")
        frames = frame(x, length, length // 2, pad_end=pad_end)
        if window_fn is not None:
            frames = frames * window_fn(length, dtype=frames.dtype)
        else:
            frames = frames * (1.0 / math.sqrt(2.0))
        q = array_ops.split(frames, 4, axis=-1)
        first = -manip_ops.reverse(q[2], [-1]) - q[3]
        second = q[0] - manip_ops.reverse(q[1], [-1])
        out = dct(array_ops.concat([first, second], axis=-1), type=4, norm=norm)
        if frames.shape.rank is not None:
            out.set_shape(frames.shape.as_list()[:-1] + [length // 2])
        return out


def inverse_mdct(mdcts: Any, window_fn: Callable[..., Any] | None = vorbis_window, norm: str | None = None,
                 name: str | None = None) -> Tensor:
    """Inverts :func:`mdct` (same ``window_fn`` and ``norm``): ``[..., samples]`` signals with
    ``samples = (frames - 1) * half + 2 * half`` for ``half = mdcts.shape[-1]``."""
    with name_scope(name, "inverse_mdct", [mdcts]):
        x = convert_to_tensor(mdcts, name="mdcts")
        half = x.shape.as_list()[-1] if x.shape.rank else None
        if half is None:
            raise ValueError(f"inverse_mdct: the last dimension of {x.name} must be known, got {x.shape}")
        if norm is None:
            result = (0.5 / half) * dct(x, type=4)
        elif norm == "ortho":
            result = dct(x, type=4, norm="ortho")
        else:
            raise ValueError(f"inverse_mdct: norm must be None or 'ortho', got {norm!r}")
        result.set_shape(x.shape)
        low, high = array_ops.split(result, 2, axis=-1)
        frames = array_ops.concat([high, -manip_ops.reverse(high, [-1]), -manip_ops.reverse(low, [-1]), -low],
                                  axis=-1)
        if window_fn is not None:
            frames = frames * window_fn(2 * half, dtype=x.dtype)
        else:
            frames = frames * (1.0 / math.sqrt(2.0))
        return overlap_and_add(frames, half)


def kaiser_window(window_length: Any, beta: float = 12.0, dtype: Any = dtypes.float32,
                  name: str | None = None) -> Tensor:
    """The Kaiser window ``i0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / i0(beta)`` of length ``N``."""
    with name_scope(name, "kaiser_window"):
        length = _static_int(window_length, "kaiser_window: window_length")
        out = dtypes.as_dtype(dtype)
        if length == 1:
            return array_ops.ones([1], dtype=out)
        half = (length - 1) / 2.0
        arg = cast_ops.cast(convert_to_tensor(np.arange(-half, half + 0.1, dtype=np.float32)), out) / half
        b = cast_ops.cast(beta, out)
        num = b * math_ops.sqrt(math_ops.maximum(1.0 - math_ops.square(arg), 0.0))
        return math_ops.exp(num - b) * (bessel_i0e(num) / bessel_i0e(b))


def kaiser_bessel_derived_window(window_length: Any, beta: float = 12.0, dtype: Any = dtypes.float32,
                                 name: str | None = None) -> Tensor:
    """The Kaiser-Bessel-derived window (a power-complementary window for the MDCT)."""
    with name_scope(name, "kaiser_bessel_derived_window"):
        length = _static_int(window_length, "kaiser_bessel_derived_window: window_length")
        total = reduction_ops.cumsum(kaiser_window(length // 2 + 1, beta, dtype=dtype))
        half = math_ops.sqrt(total[:-1] / total[-1])
        return array_ops.concat([half, manip_ops.reverse(half, [0])], axis=0)
