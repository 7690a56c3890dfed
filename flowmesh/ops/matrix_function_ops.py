"""Matrix functions: the exponential ``expm`` (op ``MatrixExponential``), the principal
square root ``sqrtm`` (``MatrixSquareRoot``) and the principal logarithm ``logm``
(``MatrixLogarithm``, complex inputs only, as in TensorFlow).

Gradients, built from graph ops (so they differentiate again):

* ``expm``: the adjoint Frechet derivative, the upper-right block of
  ``expm([[A^H, G], [0, A^H]])`` (TensorFlow differentiates its Pade composition instead;
  the values agree to rounding).
* ``sqrtm``: TensorFlow's, solving the Sylvester equation ``R^T X + X R^T = G^T`` through
  the Kronecker-sum system ``(I (x) R^T + R (x) I) vec(X) = vec(G^T)`` (cost ``O(n^6)``;
  meant for small matrices, like TensorFlow's).
* ``logm``: none (TensorFlow defines none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops
from flowmesh.ops._builders import FLOATS_COMPLEX, check_dtype, make_tensor
from flowmesh.ops.linalg_decomp_ops import adjoint
from flowmesh.ops.linalg_ops import eye, matrix_transpose
from flowmesh.ops.linalg_solve_ops import _square, matrix_solve


def _square_same(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _square("MatrixFunction", inputs[0])
    return [(inputs[0].dtype, inputs[0].shape)]


def _expm_grad(op: Any, grad: Tensor) -> list:
    a_h = adjoint(op.inputs[0])
    n = array_ops.shape(a_h)[-1]
    top = array_ops.concat([a_h, grad], axis=-1)
    bottom = array_ops.concat([array_ops.zeros_like(a_h), a_h], axis=-1)
    block = expm(array_ops.concat([top, bottom], axis=-2))
    return [block[..., :n, n:]]


def _kronecker(b1: Tensor, b2: Tensor) -> Tensor:
    """The Kronecker product of two batches of square matrices of equal order."""
    shape = array_ops.shape(b1)
    batch, order = shape[:-2], shape[-1]
    left = array_ops.reshape(b1, array_ops.concat([batch, [order, 1, order, 1]], 0))
    right = array_ops.reshape(b2, array_ops.concat([batch, [1, order, 1, order]], 0))
    return array_ops.reshape(left * right, array_ops.concat([batch, [order * order, order * order]], 0))


def _sqrtm_grad(op: Any, grad: Tensor) -> list:
    root = op.outputs[0]
    shape = array_ops.shape(root)
    order = shape[-1]
    identity = array_ops.zeros_like(root) + eye(order, dtype=root.dtype)
    ksum = _kronecker(identity, matrix_transpose(root)) + _kronecker(root, identity)
    vec_grad = array_ops.reshape(matrix_transpose(grad), array_ops.concat([shape[:-2], [order * order, 1]], 0))
    solution = matrix_solve(ksum, vec_grad)
    return [matrix_transpose(array_ops.reshape(solution, shape))]


register_op("MatrixExponential", _square_same, grad=_expm_grad)
register_op("MatrixSquareRoot", _square_same, grad=_sqrtm_grad)
register_op("MatrixLogarithm", _square_same, not_differentiable=True)


def _matrix_function(op_type: str, x: Any, allowed: Sequence[Any], name: str | None) -> Tensor:
    t = convert_to_tensor(x, name="input")
    check_dtype(op_type, t, allowed, "input")
    return make_tensor(op_type, [t], name=name or op_type)


def expm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The matrix exponential of each square matrix ``[..., M, M]``."""
    return _matrix_function("MatrixExponential", input, FLOATS_COMPLEX, name)


def sqrtm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal square root of each square matrix (no eigenvalues on the closed
    negative real axis), by the Denman-Beavers iteration."""
    return _matrix_function("MatrixSquareRoot", input, FLOATS_COMPLEX, name)


def logm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal logarithm of each diagonalizable complex square matrix."""
    return _matrix_function("MatrixLogarithm", input, (dtypes.complex64, dtypes.complex128), name)


