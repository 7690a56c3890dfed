"""Tridiagonal matrices: ``tridiagonal_matmul``, ``tridiagonal_solve`` and
``eigh_tridiagonal`` with TensorFlow's three diagonal formats:

* ``compact``: ``[..., 3, M]``, rows superdiagonal (last element ignored), main diagonal,
  subdiagonal (first element ignored);
* ``sequence``: ``(superdiag, maindiag, subdiag)``, each ``[..., M]`` (the off diagonals may
  also be ``[..., M - 1]``);
* ``matrix``: ``[..., M, M]`` (only the three diagonals are read).

flowmesh builds the dense banded matrix and uses the dense kernels (``MatMul``,
``MatrixSolve`` with partial pivoting, ``SelfAdjointEigV2``), so gradients with respect to
the diagonals and the right-hand side come from those ops; values equal TensorFlow's
dedicated O(M) kernels to rounding, at O(M^2)-O(M^3) cost.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, manip_ops, math_ops
from flowmesh.ops._builders import FLOATS, check_dtype
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.gather_ops import boolean_mask, gather
from flowmesh.ops.linalg_decomp_ops import self_adjoint_eig
from flowmesh.ops.linalg_ops import eye, matmul, matrix_band_part, matrix_transpose
from flowmesh.ops.linalg_solve_ops import matrix_solve
from flowmesh.ops.select_ops import where


def _dense(superdiag: Tensor, maindiag: Tensor, subdiag: Tensor) -> Tensor:
    """The ``[..., M, M]`` matrix with ``superdiag[i]`` at ``(i, i+1)``, ``maindiag[i]`` at
    ``(i, i)`` and ``subdiag[i]`` at ``(i, i-1)``."""
    m = array_ops.shape(maindiag)[-1]
    identity = eye(m, dtype=maindiag.dtype)
    ones = array_ops.ones_like(identity)
    upper = matrix_band_part(ones, 0, 1) - identity
    lower = matrix_band_part(ones, 1, 0) - identity
    dense = (array_ops.expand_dims(maindiag, -1) * identity + array_ops.expand_dims(superdiag, -1) * upper
             + array_ops.expand_dims(subdiag, -1) * lower)
    if maindiag.shape.rank is not None:
        dense.set_shape(maindiag.shape.concatenate(maindiag.shape[-1:]))
    return dense


def _pad_off_diagonal(t: Tensor, m: Any, front: bool, what: str) -> Tensor:
    n = t.shape.as_list()[-1] if t.shape.rank else None
    if n is None or m is None or n == m:
        return t
    if n != m - 1:
        raise ValueError(f"Expected the {what} to have length {m} or {m - 1}, got {n}")
    paddings = [[0, 0]] * (t.shape.rank - 1) + [[1, 0] if front else [0, 1]]
    return manip_ops.pad(t, paddings)


def _as_dense(op_name: str, diagonals: Any, diagonals_format: str) -> Tensor:
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals, name="diagonals")
        if d.shape.rank is not None and (d.shape.rank < 2 or d.shape.as_list()[-2] not in (None, 3)):
            raise ValueError(f"{op_name}: compact diagonals must have shape [..., 3, M], got {d.shape}")
        return _dense(d[..., 0, :], d[..., 1, :], d[..., 2, :])
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            raise ValueError(f"{op_name}: expected diagonals to be a sequence of length 3 "
                             "(superdiag, maindiag, subdiag)")
        main = convert_to_tensor(diagonals[1], name="maindiag")
        m = main.shape.as_list()[-1] if main.shape.rank else None
        sup = _pad_off_diagonal(convert_to_tensor(diagonals[0], dtype=main.dtype), m, False, "superdiagonal")
        sub = _pad_off_diagonal(convert_to_tensor(diagonals[2], dtype=main.dtype), m, True, "subdiagonal")
        return _dense(sup, main, sub)
    if diagonals_format == "matrix":
        d = convert_to_tensor(diagonals, name="diagonals")
        dims = d.shape.as_list() if d.shape.rank else [None, None]
        if None not in dims[-2:] and dims[-1] != dims[-2]:
            raise ValueError(f"{op_name}: expected last two dimensions of diagonals to be same, got {dims[-2:]}")
        return matrix_band_part(d, 1, 1)
    raise ValueError(f"{op_name}: unrecognized diagonals_format {diagonals_format!r} "
                     "(expected 'compact', 'sequence' or 'matrix')")


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                       name: str | None = None) -> Tensor:
    """``A @ rhs`` for tridiagonal ``A`` given by ``diagonals``; ``rhs`` is ``[..., M, N]``."""
    with name_scope(name, "TridiagonalMatMul"):
        a = _as_dense("tridiagonal_matmul", diagonals, diagonals_format)
        return matmul(a, convert_to_tensor(rhs, dtype=a.dtype, name="rhs"))


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact", transpose_rhs: bool = False,
                      conjugate_rhs: bool = False, name: str | None = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """Solves ``A X = rhs`` for tridiagonal ``A``; ``rhs`` is ``[..., M]`` or ``[..., M, K]``
    (``[..., K, M]`` with ``transpose_rhs``). Always pivots (``partial_pivoting`` is
    accepted for compatibility); a singular ``A`` raises ``InvalidArgumentError`` even with
    ``perturb_singular``."""
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    with name_scope(name, "tridiagonal_solve"):
        a = _as_dense("tridiagonal_solve", diagonals, diagonals_format)
        b = convert_to_tensor(rhs, dtype=a.dtype, name="rhs")
        if b.shape.rank is not None and a.shape.rank is not None and b.shape.rank == a.shape.rank - 1:
            b = conj(b) if conjugate_rhs else b
            return array_ops.squeeze(matrix_solve(a, array_ops.expand_dims(b, -1)), [-1])
        if transpose_rhs:
            b = matrix_transpose(b, conjugate=conjugate_rhs)
        elif conjugate_rhs:
            b = conj(b)
        return matrix_solve(a, b)


def eigh_tridiagonal(alpha: Any, beta: Any, eigvals_only: bool = True, select: str = "a", select_range: Any = None,
                     tol: Any = None, name: str | None = None) -> Any:
    """Eigenvalues (ascending; and with ``eigvals_only=False`` eigenvectors as columns) of the
    real symmetric tridiagonal matrix with diagonal ``alpha`` ``[n]`` and off-diagonal
    ``beta`` ``[n - 1]``.

    ``select``: ``'a'`` all, ``'i'`` the indices ``select_range[0] ... select_range[1]``
    (inclusive), ``'v'`` the eigenvalues in ``(select_range[0], select_range[1]]``. ``tol``
    is accepted for compatibility (the dense solver is accurate to rounding).

    Raises:
        TypeError: for complex inputs (not supported by flowmesh's symmetric eigensolver).
    """
    with name_scope(name, "eigh_tridiagonal"):
        a = convert_to_tensor(alpha, name="alpha")
        check_dtype("eigh_tridiagonal", a, FLOATS, "alpha")
        b = convert_to_tensor(beta, dtype=a.dtype, name="beta")
        values, vectors = self_adjoint_eig(_dense(manip_ops.pad(b, [[0, 1]]), a, manip_ops.pad(b, [[1, 0]])))
        if select == "i":
            lo, hi = select_range
            values, vectors = values[lo:hi + 1], vectors[:, lo:hi + 1]
        elif select == "v":
            lo, hi = select_range
            keep = math_ops.logical_and(math_ops.greater(values, lo), math_ops.less_equal(values, hi))
            index = array_ops.reshape(where(keep), [-1])
            values, vectors = boolean_mask(values, keep), gather(vectors, index, axis=1)
        elif select != "a":
            raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
        return values if eigvals_only else (values, vectors)
