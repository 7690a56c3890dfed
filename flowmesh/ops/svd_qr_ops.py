"""Orthogonal decompositions: ``Svd`` (``s, u, v`` with ``a = u diag(s) v^H``) and ``Qr``
(TensorFlow's op types and attrs), with TensorFlow's gradients (``linalg_grad.py``) built
from graph ops. Singular vectors and ``Q``/``R`` are unique only up to signs (LAPACK's
Householder convention is used, as TensorFlow's kernels do); compare them by reconstruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import FLOATS_COMPLEX, check_dtype, make_op
from flowmesh.ops.linalg_decomp_ops import adjoint, matrix_triangular_solve
from flowmesh.ops.linalg_ops import matmul, matrix_band_part, matrix_diag, matrix_set_diag


def _matrix_dims(op_type: str, x: Tensor) -> tuple[list, Any, Any]:
    if x.shape.rank is None:
        return [], None, None
    if x.shape.rank < 2:
        raise ValueError(f"{op_type} needs a matrix input of rank >= 2, got {x.name} with shape {x.shape}")
    dims = x.shape.as_list()
    return dims[:-2], dims[-2], dims[-1]


def _min(m: Any, n: Any) -> Any:
    return None if m is None or n is None else min(m, n)


def _svd_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    batch, m, n = _matrix_dims("Svd", x)
    real = x.dtype.real_dtype
    if x.shape.rank is None:
        return [(real, TensorShape(None)), (x.dtype, TensorShape(None)), (x.dtype, TensorShape(None))]
    k = _min(m, n)
    if not attrs["compute_uv"]:
        return [(real, TensorShape(batch + [k])), (x.dtype, TensorShape([0])), (x.dtype, TensorShape([0]))]
    full = attrs["full_matrices"]
    return [(real, TensorShape(batch + [k])), (x.dtype, TensorShape(batch + [m, m if full else k])),
            (x.dtype, TensorShape(batch + [n, n if full else k]))]


def _safe_reciprocal(x: Tensor, epsilon: float = 1e-20) -> Tensor:
    return x * math_ops.reciprocal(x * x + epsilon)


def _svd_grad(op: Any, grad_s: Any, grad_u: Any, grad_v: Any) -> list:
    a = op.inputs[0]
    grad_s = array_ops.zeros_like(op.outputs[0]) if grad_s is None else grad_s
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a, compute_uv=True)
        return [matmul(u, matmul(matrix_diag(grad_s), v, adjoint_b=True))]
    _, m, n = _matrix_dims("Svd", a)
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown inner matrix "
                                  f"shape (input {a.name} has shape {a.shape}).")
    s, u, v = op.outputs
    grad_u = array_ops.zeros_like(u) if grad_u is None else grad_u
    grad_v = array_ops.zeros_like(v) if grad_v is None else grad_v
    use_adjoint = m > n
    if use_adjoint:
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if op.attrs["full_matrices"] and abs(m - n) > 1:
        raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True "
                                  f"(input {a.name} has shape {a.shape}).")
    grad = _svd_grad_wide(s, u, v, grad_s, grad_u, grad_v, m, n, op.attrs["full_matrices"])
    return [adjoint(grad) if use_adjoint else grad]


def _svd_grad_wide(s: Tensor, u: Tensor, v: Tensor, grad_s: Tensor, grad_u: Tensor, grad_v: Tensor, m: int,
                   n: int, full: bool) -> Tensor:
    """TensorFlow's formula for ``m <= n`` (real inputs)."""
    s_mat, s2 = matrix_diag(s), math_ops.square(s)
    f = matrix_set_diag(_safe_reciprocal(array_ops.expand_dims(s2, -2) - array_ops.expand_dims(s2, -1)),
                        array_ops.zeros_like(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * matmul(u, grad_u, adjoint_a=True)
    f_v = f * matmul(v1, grad_v1, adjoint_a=True)
    inner = matrix_diag(grad_s) + matmul(f_u + adjoint(f_u), s_mat) + matmul(s_mat, f_v + adjoint(f_v))
    term1 = matmul(u, matmul(inner, v1, adjoint_b=True))
    if m == n:
        return term1
    gv1t = adjoint(grad_v1)
    term2 = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
    if full:
        v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
        term2 = term2 - matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
    return term1 + matmul(matmul(u, matrix_diag(_safe_reciprocal(s))), term2)


register_op("Svd", _svd_shape, grad=_svd_grad)


def _qr_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    batch, m, n = _matrix_dims("Qr", x)
    if x.shape.rank is None:
        return [(x.dtype, TensorShape(None)), (x.dtype, TensorShape(None))]
    k = m if attrs["full_matrices"] else _min(m, n)
    return [(x.dtype, TensorShape(batch + [m, k])), (x.dtype, TensorShape(batch + [k, n]))]


def _triangular_right(x: Tensor, r: Tensor) -> Tensor:
    """``x @ inv(r)^H`` for upper triangular ``r``."""
    return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


def _qr_grad_deep(q: Tensor, r: Tensor, dq: Tensor, dr: Tensor) -> Tensor:
    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    tril = matrix_band_part(qdq - adjoint(qdq) + rdr - adjoint(rdr), -1, 0)
    return matmul(q, dr + _triangular_right(tril, r)) + _triangular_right(dq - matmul(q, qdq), r)


def _qr_grad(op: Any, dq: Any, dr: Any) -> list:
    q, r = op.outputs
    dq = array_ops.zeros_like(q) if dq is None else dq
    dr = array_ops.zeros_like(r) if dr is None else dr
    if r.shape.rank is None or None in r.shape.as_list()[-2:] or q.shape.as_list()[-2] is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes (r has shape {r.shape}).")
    rows, cols = q.shape.as_list()[-2], r.shape.as_list()[-1]
    if r.shape.as_list()[-2] > cols and q.shape.as_list()[-1] == rows:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and full_matrices is true "
                                  f"(r has shape {r.shape}).")
    if rows >= cols:
        return [_qr_grad_deep(q, r, dq, dr)]
    a = op.inputs[0]
    y, u = a[..., :, rows:], r[..., :, :rows]
    dv, du = dr[..., :, rows:], dr[..., :, :rows]
    dx = _qr_grad_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return [array_ops.concat([dx, matmul(q, dv)], axis=-1)]


register_op("Qr", _qr_shape, grad=_qr_grad)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: str | None = None) -> Any:
    """Singular values ``s`` (descending) and, with ``compute_uv``, vectors ``u``, ``v`` of
    each matrix ``[..., M, N]`` so that ``tensor = u @ diag(s) @ adjoint(v)``.

    Returns:
        ``s`` alone when ``compute_uv`` is False, else ``(s, u, v)``.
    """
    x = convert_to_tensor(tensor, name="tensor")
    check_dtype("Svd", x, FLOATS_COMPLEX, "input")
    op = make_op("Svd", [x], {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)},
                 name=name or "Svd")
    return tuple(op.outputs) if compute_uv else op.outputs[0]


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``q, r`` of each matrix (``q`` orthonormal columns, ``r`` upper triangular)."""
    x = convert_to_tensor(input, name="input")
    check_dtype("Qr", x, FLOATS_COMPLEX, "input")
    return tuple(make_op("Qr", [x], {"full_matrices": bool(full_matrices)}, name=name or "Qr").outputs)
