"""Complex numbers: ``Complex``, ``Real``, ``Imag``, ``Conj``, ``ComplexAbs``, ``Angle``
(TensorFlow's op types and gradient conventions: the gradient of a real loss with respect
to ``z`` is ``dL/dRe(z) + i dL/dIm(z)``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import broadcast_binary, make_tensor
from flowmesh.ops.reduction_ops import reduce_to_shape_of

_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _to_real(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    if x.dtype not in _REAL:
        raise TypeError(f"expected a complex64 or complex128 tensor, got {x.dtype.name}")
    return [(_REAL[x.dtype], x.shape)]


def _complex_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    re, im = inputs
    if re.dtype != im.dtype or re.dtype not in _COMPLEX:
        raise TypeError(f"complex: real and imag must both be float32 or float64, got {re.dtype.name} and "
                        f"{im.dtype.name}")
    return [(_COMPLEX[re.dtype], broadcast_binary(inputs, attrs)[0][1])]


def _complex_grad(op: Any, grad: Tensor) -> list:
    re, im = op.inputs
    return [reduce_to_shape_of(real(grad), re), reduce_to_shape_of(imag(grad), im)]


def _zeros(t: Tensor) -> Tensor:
    return array_ops.zeros_like(t)


register_op("Complex", _complex_shape, grad=_complex_grad)
register_op("Real", _to_real, grad=lambda op, g: [complex(g, _zeros(g))])
register_op("Imag", _to_real, grad=lambda op, g: [complex(_zeros(g), g)])
register_op("Conj", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)], grad=lambda op, g: [conj(g)])
register_op("ComplexAbs", _to_real, grad=lambda op, g: [math_ops.div_no_nan(
    complex(g, _zeros(g)) * op.inputs[0], complex(op.outputs[0], _zeros(op.outputs[0])))])


def _angle_grad(op: Any, grad: Tensor) -> list:
    x = op.inputs[0]
    z = math_ops.reciprocal(complex(imag(x), real(x)))
    return [-complex(grad, _zeros(grad)) * z]


register_op("Angle", _to_real, grad=_angle_grad)


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """``real + i * imag`` (float32 -> complex64, float64 -> complex128)."""
    re = convert_to_tensor(real)
    im = convert_to_tensor(imag, dtype=re.dtype)
    return make_tensor("Complex", [re, im], name=name or "Complex")


def _unary(op_type: str, x: Any, name: str | None) -> Tensor:
    return make_tensor(op_type, [convert_to_tensor(x)], name=name or op_type)


def real(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The real part (a real input is returned as is)."""
    x = convert_to_tensor(input)
    return _unary("Real", x, name) if x.dtype in _REAL else x


def imag(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The imaginary part (zeros for a real input)."""
    x = convert_to_tensor(input)
    return _unary("Imag", x, name) if x.dtype in _REAL else array_ops.zeros_like(x)


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate (a real input is returned as is)."""
    t = convert_to_tensor(x)
    return _unary("Conj", t, name) if t.dtype in _REAL else t


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The argument of each complex number (0 or pi for real inputs)."""
    x = convert_to_tensor(input)
    if x.dtype in _REAL:
        return _unary("Angle", x, name)
    return math_ops.atan2(array_ops.zeros_like(x), x, name=name)


def complex_abs(x: Any, name: str | None = None) -> Tensor:
    """``|x|`` of a complex tensor."""
    return _unary("ComplexAbs", x, name)
