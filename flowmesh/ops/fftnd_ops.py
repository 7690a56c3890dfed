"""N-dimensional Fourier transforms over chosen axes: ``FFTND IFFTND RFFTND IRFFTND``
(TensorFlow's op types, inputs ``(input, fft_length, axes)``).

Semantics are NumPy's ``np.fft.fftn(x, s=fft_length, axes=axes, norm=norm)`` family, which
TensorFlow's wrappers implement: each transformed axis is cropped or zero-padded to its
``fft_length``; ``axes`` defaults to every axis and ``fft_length`` to the input's sizes there
(``2 * (n - 1)`` on the last axis for ``irfftnd``). TensorFlow's CPU build registers no
kernel for these ops and no gradient; flowmesh runs them on ``torch.fft`` and, like
TensorFlow, declares them not differentiable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import cast_ops
from flowmesh.ops._builders import constant_value, make_tensor

_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL = {c: r for r, c in _COMPLEX.items()}


def _fftnd_shape(kind: str):
    def shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        return _fftnd_spec(kind, inputs)

    return shape


def _fftnd_spec(kind: str, inputs: Sequence[Tensor]) -> list:
    x, length, axes = inputs
    out = {"RFFTND": _COMPLEX.get(x.dtype), "IRFFTND": _REAL.get(x.dtype)}.get(kind, x.dtype)
    lengths, axes_v = constant_value(length), constant_value(axes)
    if x.shape.rank is None:
        return [(out, TensorShape(None))]
    dims = list(x.shape.as_list())
    if axes_v is None or lengths is None:
        return [(out, TensorShape([None] * len(dims)))]
    for k, (axis, n) in enumerate(zip(axes_v.tolist(), lengths.tolist())):
        last = k == len(axes_v) - 1
        dims[axis] = n // 2 + 1 if last and kind == "RFFTND" else n
    return [(out, TensorShape(dims))]


for _op in ("FFTND", "IFFTND", "RFFTND", "IRFFTND"):
    register_op(_op, _fftnd_shape(_op), not_differentiable=True)


def _axes_and_lengths(x: Tensor, fft_length: Any, axes: Any, inverse_real: bool) -> tuple[list, list]:
    if x.shape.rank is None and (axes is None or fft_length is None):
        raise ValueError(f"fftnd: the rank of {x.name} is unknown; pass axes and fft_length")
    rank = x.shape.rank
    axes_v = list(range(rank)) if axes is None else [int(a) for a in (axes if isinstance(axes, (list, tuple))
                                                                       else constant_value(convert_to_tensor(axes)))]
    if rank is not None:
        axes_v = [a % rank for a in axes_v]
    if fft_length is not None:
        lengths = [int(n) for n in (fft_length if isinstance(fft_length, (list, tuple))
                                    else constant_value(convert_to_tensor(fft_length)))]
    else:
        dims = x.shape.as_list()
        if any(dims[a] is None for a in axes_v):
            raise ValueError(f"fftnd: {x.name} has unknown sizes {x.shape} on axes {axes_v}; pass fft_length")
        lengths = [dims[a] for a in axes_v]
        if inverse_real:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    if len(lengths) != len(axes_v):
        raise ValueError(f"fftnd: fft_length {lengths} and axes {axes_v} differ in length")
    return axes_v, lengths


def _fftnd(kind: str, input_tensor: Any, fft_length: Any, axes: Any, norm: str | None, name: str | None) -> Tensor:
    allowed = {"FFTND": tuple(_REAL), "IFFTND": tuple(_REAL), "RFFTND": tuple(_COMPLEX), "IRFFTND": tuple(_REAL)}
    with name_scope(name, kind.lower(), [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if x.dtype not in allowed[kind]:
            raise TypeError(f"{kind.lower()} needs a {' or '.join(d.name for d in allowed[kind])} input, "
                            f"got {x.dtype.name} ({x.name})")
        axes_v, lengths = _axes_and_lengths(x, fft_length, axes, kind == "IRFFTND")
        norm = norm or "backward"
        if norm not in ("backward", "forward", "ortho"):
            raise ValueError(f"{kind.lower()}: norm must be 'backward', 'forward' or 'ortho', got {norm!r}")
        if norm != "backward":
            n = float(math.prod(lengths))
            scale = n if norm == "forward" else math.sqrt(n)
            inverse = kind.startswith("I")
            x = x * cast_ops.cast(scale if inverse else 1.0 / scale, x.dtype)
        args = [x, convert_to_tensor(lengths, dtype=dtypes.int32, name="fft_length"),
                convert_to_tensor(axes_v, dtype=dtypes.int32, name="axes")]
        return make_tensor(kind, args, _type_attrs(kind, x.dtype), name=kind)


def _type_attrs(kind: str, dtype: Any) -> dict[str, Any]:
    """TensorFlow's ``Tcomplex`` / ``Treal`` attrs of the op."""
    if kind == "RFFTND":
        return {"Treal": dtype, "Tcomplex": _COMPLEX[dtype]}
    if kind == "IRFFTND":
        return {"Treal": _REAL[dtype], "Tcomplex": dtype}
    return {"Tcomplex": dtype}


def fftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
          name: str | None = None) -> Tensor:
    """The N-D discrete Fourier transform of a complex tensor over ``axes``."""
    return _fftnd("FFTND", input_tensor, fft_length, axes, norm, name)


def ifftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
           name: str | None = None) -> Tensor:
    """The N-D inverse DFT of a complex tensor over ``axes``."""
    return _fftnd("IFFTND", input_tensor, fft_length, axes, norm, name)


def rfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
           name: str | None = None) -> Tensor:
    """The N-D DFT of a real tensor: ``fft_length[-1] // 2 + 1`` frequencies on the last axis."""
    return _fftnd("RFFTND", input_tensor, fft_length, axes, norm, name)


def irfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
            name: str | None = None) -> Tensor:
    """The inverse of :func:`rfftnd`: a real tensor with ``fft_length`` sizes on ``axes``."""
    return _fftnd("IRFFTND", input_tensor, fft_length, axes, norm, name)


# --- the raw ops, as TensorFlow exports them at the top level (``tf.fftnd`` ...) ------------------
def raw_fftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.fftnd``: the ``FFTND`` op (``fft_length`` and ``axes`` required)."""
    return _fftnd("FFTND", input, fft_length, axes, None, name)


def raw_ifftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.ifftnd``: the ``IFFTND`` op."""
    return _fftnd("IFFTND", input, fft_length, axes, None, name)


def raw_rfftnd(input: Any, fft_length: Any, axes: Any, Tcomplex: Any = dtypes.complex64,  # noqa: A002, N803
               name: str | None = None) -> Tensor:
    """``tf.rfftnd``: the ``RFFTND`` op (``Tcomplex`` must match the input's precision)."""
    _check_pair("rfftnd", input, Tcomplex, _COMPLEX)
    return _fftnd("RFFTND", input, fft_length, axes, None, name)


def raw_irfftnd(input: Any, fft_length: Any, axes: Any, Treal: Any = dtypes.float32,  # noqa: A002, N803
                name: str | None = None) -> Tensor:
    """``tf.irfftnd``: the ``IRFFTND`` op (``Treal`` must match the input's precision)."""
    _check_pair("irfftnd", input, Treal, _REAL)
    return _fftnd("IRFFTND", input, fft_length, axes, None, name)


def _check_pair(op_name: str, x: Any, wanted: Any, mapping: dict) -> None:
    t = convert_to_tensor(x)
    if t.dtype in mapping and mapping[t.dtype] != dtypes.as_dtype(wanted):
        raise TypeError(f"{op_name}: a {t.dtype.name} input gives {mapping[t.dtype].name}, "
                        f"not the requested {dtypes.as_dtype(wanted).name}; cast the input first")
