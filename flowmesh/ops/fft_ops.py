"""Fourier transforms: ``FFT IFFT FFT2D IFFT2D FFT3D IFFT3D`` over the innermost 1-3
dimensions of complex tensors (TensorFlow's op types; gradients ``ifft(g) * n`` and
``fft(g) / n``), and the real transforms ``rfft irfft`` (1-3-D) composed from them: ``rfft``
keeps the ``n // 2 + 1`` non-negative frequencies, ``irfft`` rebuilds the Hermitian spectrum.
Also ``fftshift``/``ifftshift`` and the Hann/Hamming windows."""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, range_ops
from flowmesh.ops._builders import constant_value, make_tensor, same_shape
from flowmesh.ops.complex_ops import complex, conj, real
from flowmesh.ops.reduction_ops import reduce_prod

_FFTS = {"FFT": 1, "IFFT": 1, "FFT2D": 2, "IFFT2D": 2, "FFT3D": 3, "IFFT3D": 3}
_INVERSE = {"FFT": "IFFT", "IFFT": "FFT", "FFT2D": "IFFT2D", "IFFT2D": "FFT2D", "FFT3D": "IFFT3D", "IFFT3D": "FFT3D"}


def _size(t: Tensor, dims: int) -> Tensor:
    shape = array_ops.shape(t)
    return cast_ops.cast(reduction_prod(shape[-dims:]), t.dtype)


def reduction_prod(x: Tensor) -> Tensor:
    return reduce_prod(x)


def _fft_grad(op: Any, grad: Tensor) -> list:
    dims = _FFTS[op.type]
    inverse = make_tensor(_INVERSE[op.type], [grad])
    n = _size(grad, dims)
    return [inverse * n if op.type.startswith("FFT") else inverse / n]


for _op in _FFTS:
    register_op(_op, same_shape, grad=_fft_grad)


def _fft(op_type: str, x: Any, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    if t.dtype not in (dtypes.complex64, dtypes.complex128):
        raise TypeError(f"{op_type} needs a complex64 or complex128 input, got {t.dtype.name}")
    if t.shape.rank is not None and t.shape.rank < _FFTS[op_type]:
        raise InvalidArgumentError(f"{op_type} needs an input of rank >= {_FFTS[op_type]}, got {t.shape}")
    return make_tensor(op_type, [t], name=name or op_type)


def fft(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Discrete Fourier transform over the innermost dimension."""
    return _fft("FFT", input, name)


def ifft(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Inverse DFT over the innermost dimension."""
    return _fft("IFFT", input, name)


def fft2d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _fft("FFT2D", input, name)


def ifft2d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _fft("IFFT2D", input, name)


def fft3d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _fft("FFT3D", input, name)


def ifft3d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return _fft("IFFT3D", input, name)


def _static_lengths(x: Tensor, dims: int, fft_length: Any) -> list[int]:
    if fft_length is not None:
        return [int(n) for n in (fft_length if not isinstance(fft_length, Tensor) else _const(fft_length))]
    shape = x.shape.as_list() if x.shape.rank is not None else [None] * dims
    if any(d is None for d in shape[-dims:]):
        raise InvalidArgumentError("rfft/irfft need fft_length or statically known transform dimensions")
    return shape[-dims:]


def _const(t: Tensor) -> Any:
    value = constant_value(t)
    if value is None:
        raise InvalidArgumentError("fft_length must be a constant")
    return value


def _fit(x: Tensor, lengths: list[int], dims: int) -> Tensor:
    """Crops or zero-pads the innermost ``dims`` dimensions of ``x`` to ``lengths``."""
    rank = x.shape.rank
    shape = x.shape.as_list()
    pads = [[0, 0]] * (rank - dims) + [[0, max(0, n - (shape[rank - dims + i] or n))] for i, n in enumerate(lengths)]
    x = manip_ops.pad(x, pads) if any(p[1] for p in pads) else x
    begin = [0] * rank
    size = [-1] * (rank - dims) + list(lengths)
    return manip_ops.slice(x, begin, size)


def _rfft(x: Any, fft_length: Any, dims: int, name: str) -> Tensor:
    with name_scope(None, name, [x]):
        t = convert_to_tensor(x)
        lengths = _static_lengths(t, dims, fft_length)
        t = _fit(t, lengths, dims)
        spectrum = {1: fft, 2: fft2d, 3: fft3d}[dims](complex(t, array_ops.zeros_like(t)))
        return _fit(spectrum, lengths[:-1] + [lengths[-1] // 2 + 1], dims)


def _irfft(x: Any, fft_length: Any, dims: int, name: str) -> Tensor:
    with name_scope(None, name, [x]):
        t = convert_to_tensor(x)
        shape = t.shape.as_list()
        if fft_length is None:
            lengths = shape[-dims:-1] + [2 * (shape[-1] - 1)]
        else:
            lengths = _static_lengths(t, dims, fft_length)
        n = lengths[-1]
        half = _fit(t, lengths[:-1] + [n // 2 + 1], dims)
        mirror = conj(manip_ops.reverse(half[..., 1:(n + 1) // 2], [-1]))
        if dims > 1:  # the mirrored half also reverses the other axes (k -> -k mod n)
            axes = list(range(-dims, -1))
            mirror = manip_ops.roll(manip_ops.reverse(mirror, axes), [1] * len(axes), axes)
        full = array_ops.concat([half, mirror], -1)
        return real({1: ifft, 2: ifft2d, 3: ifft3d}[dims](full))


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """DFT of a real signal: the ``fft_length // 2 + 1`` non-negative frequencies."""
    return _rfft(input_tensor, fft_length, 1, name or "RFFT")


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The real signal of a Hermitian spectrum given by its non-negative frequencies."""
    return _irfft(input_tensor, fft_length, 1, name or "IRFFT")


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    return _rfft(input_tensor, fft_length, 2, name or "RFFT2D")


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    return _irfft(input_tensor, fft_length, 2, name or "IRFFT2D")


def rfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    return _rfft(input_tensor, fft_length, 3, name or "RFFT3D")


def irfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    return _irfft(input_tensor, fft_length, 3, name or "IRFFT3D")


def _shift(x: Any, axes: Any, sign: int, name: str) -> Tensor:
    with name_scope(None, name, [x]):
        t = convert_to_tensor(x)
        rank = t.shape.rank
        axes = list(range(rank)) if axes is None else ([axes] if isinstance(axes, int) else list(axes))
        shape = array_ops.shape(t)
        shifts = [(shape[a] // 2) * sign if sign > 0 else -(shape[a] // 2) for a in axes]
        return manip_ops.roll(t, array_ops.stack(shifts), axes)


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Moves the zero frequency to the center."""
    return _shift(x, axes, 1, name or "fftshift")


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    return _shift(x, axes, -1, name or "ifftshift")


def _cosine_window(length: int, periodic: bool, a: float, b: float, dtype: Any, name: str) -> Tensor:
    with name_scope(None, name):
        n = int(length)
        if n == 1:
            return array_ops.ones([1], dtype=dtype)
        denominator = n + (1 if periodic and n % 2 == 0 else 0) - 1
        k = cast_ops.cast(range_ops.range(n), dtype)
        return a - b * math_ops.cos(2.0 * math.pi * k / float(denominator))


def hann_window(window_length: Any, periodic: bool = True, dtype: Any = dtypes.float32,
                name: str | None = None) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / N)`` (``N = length`` when periodic, else ``length - 1``)."""
    return _cosine_window(int(_as_int(window_length)), periodic, 0.5, 0.5, dtype, name or "hann_window")


def hamming_window(window_length: Any, periodic: bool = True, dtype: Any = dtypes.float32,
                   name: str | None = None) -> Tensor:
    """``0.54 - 0.46 cos(2 pi n / N)``."""
    return _cosine_window(int(_as_int(window_length)), periodic, 0.54, 0.46, dtype, name or "hamming_window")


def _as_int(value: Any) -> int:
    return int(_const(value)) if isinstance(value, Tensor) else int(value)
