"""Tridiagonal matrices: ``TridiagonalMatMul`` and ``TridiagonalSolve`` (TensorFlow's op
types, inputs and gradients) behind ``tridiagonal_matmul`` / ``tridiagonal_solve`` with
TensorFlow's three diagonal formats, and ``eigh_tridiagonal``:

* ``compact``: ``[..., 3, M]``, rows superdiagonal (last element ignored), main diagonal,
  subdiagonal (first element ignored);
* ``sequence``: ``(superdiag, maindiag, subdiag)``, each ``[..., M]`` (the off diagonals may
  also be ``[..., M - 1]``);
* ``matrix``: ``[..., M, M]`` (only the three diagonals are read).

``TridiagonalMatMul`` costs O(M N); ``TridiagonalSolve``'s kernel eliminates with partial
pivoting in O(M) as TensorFlow's does (small systems go through one batched dense LU, which
is faster there; the values agree to rounding). A singular system raises ``InvalidArgumentError`` even with
``perturb_singular``. ``eigh_tridiagonal`` uses the dense symmetric eigensolver.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops, manip_ops, math_ops, reduction_ops
from flowmesh.ops._builders import FLOATS, FLOATS_COMPLEX, check_dtype, make_tensor
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.gather_ops import boolean_mask, gather
from flowmesh.ops.linalg_decomp_ops import self_adjoint_eig
from flowmesh.ops.linalg_ops import eye, matrix_band_part, matrix_diag_part, matrix_transpose
from flowmesh.ops.select_ops import where


def _left_shift(x: Tensor) -> Tensor:
    """Rows moved up by one along axis -2, a zero row entering at the bottom."""
    return array_ops.concat([x[..., 1:, :], array_ops.zeros_like(x[..., :1, :])], axis=-2)


def _right_shift(x: Tensor) -> Tensor:
    return array_ops.concat([array_ops.zeros_like(x[..., :1, :]), x[..., :-1, :]], axis=-2)


def _matmul_grad(op: Any, grad: Tensor) -> list:
    superdiag, maindiag, subdiag, rhs = op.inputs
    rhs_c = conj(rhs) if rhs.dtype.is_complex else rhs
    sup_c, main_c, sub_c = (matrix_transpose(t, conjugate=True) for t in (superdiag, maindiag, subdiag))
    grads = [reduction_ops.reduce_sum(t * grad, axis=-1) for t in (_left_shift(rhs_c), rhs_c, _right_shift(rhs_c))]
    rhs_grad = _right_shift(sup_c * grad) + main_c * grad + _left_shift(sub_c * grad)
    return [array_ops.expand_dims(g, -2) for g in grads] + [rhs_grad]


register_op("TridiagonalMatMul", lambda inputs, attrs: [(inputs[3].dtype, inputs[3].shape)], grad=_matmul_grad)


def _transpose_compact(diags: Tensor) -> Tensor:
    zeros = array_ops.zeros_like(diags[..., 1, :1])
    superdiag = array_ops.concat([diags[..., 2, 1:], zeros], axis=-1)
    subdiag = array_ops.concat([zeros, diags[..., 0, :-1]], axis=-1)
    return array_ops.stack([superdiag, diags[..., 1, :], subdiag], axis=-2)


def _three_diagonals_of_product(x: Tensor, y: Tensor) -> Tensor:
    """The compact diagonals of ``x @ y^T`` (``x``, ``y`` ``[..., M, K]``)."""
    diag = reduction_ops.reduce_sum(x * y, axis=-1)
    superdiag = reduction_ops.reduce_sum(x * _left_shift(y), axis=-1)
    subdiag = reduction_ops.reduce_sum(x * _right_shift(y), axis=-1)
    return array_ops.stack([superdiag, diag, subdiag], axis=-2)


def _solve_grad(op: Any, grad: Tensor) -> list:
    diags, x = op.inputs[0], op.outputs[0]
    grad_rhs = make_tensor("TridiagonalSolve", [_transpose_compact(diags), grad], dict(op.attrs))
    return [-_three_diagonals_of_product(grad_rhs, x), grad_rhs]


register_op("TridiagonalSolve", lambda inputs, attrs: [(inputs[1].dtype, inputs[1].shape)], grad=_solve_grad)


def _pad_off_diagonal(t: Tensor, m: Any, front: bool, what: str) -> Tensor:
    n = t.shape.as_list()[-1] if t.shape.rank else None
    if n is None or m is None or n == m:
        return t
    if n != m - 1:
        raise ValueError(f"Expected the {what} to have length {m} or {m - 1}, got {n}")
    paddings = [[0, 0]] * (t.shape.rank - 1) + [[1, 0] if front else [0, 1]]
    return manip_ops.pad(t, paddings)


def _sequence(op_name: str, diagonals: Any) -> tuple[Tensor, Tensor, Tensor]:
    if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
        raise ValueError(f"{op_name}: expected diagonals to be a sequence of length 3 (superdiag, maindiag, subdiag)")
    main = convert_to_tensor(diagonals[1], name="maindiag")
    m = main.shape.as_list()[-1] if main.shape.rank else None
    sup = _pad_off_diagonal(convert_to_tensor(diagonals[0], dtype=main.dtype), m, False, "superdiagonal")
    sub = _pad_off_diagonal(convert_to_tensor(diagonals[2], dtype=main.dtype), m, True, "subdiagonal")
    return sup, main, sub


def _three(op_name: str, diagonals: Any, diagonals_format: str) -> tuple[Tensor, Tensor, Tensor]:
    """``(superdiag, maindiag, subdiag)``, each ``[..., M]``, from any of the three formats."""
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals, name="diagonals")
        if d.shape.rank is not None and (d.shape.rank < 2 or d.shape.as_list()[-2] not in (None, 3)):
            raise ValueError(f"{op_name}: compact diagonals must have shape [..., 3, M], got {d.shape}")
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if diagonals_format == "sequence":
        return _sequence(op_name, diagonals)
    if diagonals_format == "matrix":
        d = convert_to_tensor(diagonals, name="diagonals")
        dims = d.shape.as_list() if d.shape.rank else [None, None]
        if None not in dims[-2:] and dims[-1] != dims[-2]:
            raise ValueError(f"{op_name}: expected last two dimensions of diagonals to be same, got {dims[-2:]}")
        main = matrix_diag_part(d)
        zero = array_ops.zeros_like(main[..., :1])
        sup = array_ops.concat([matrix_diag_part(d[..., :-1, 1:]), zero], axis=-1)
        sub = array_ops.concat([zero, matrix_diag_part(d[..., 1:, :-1])], axis=-1)
        return sup, main, sub
    raise ValueError(f"{op_name}: unrecognized diagonals_format {diagonals_format!r} "
                     "(expected 'compact', 'sequence' or 'matrix')")


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


def _as_dense(op_name: str, diagonals: Any, diagonals_format: str) -> Tensor:
    return _dense(*_three(op_name, diagonals, diagonals_format))


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                       name: str | None = None) -> Tensor:
    """``A @ rhs`` for tridiagonal ``A`` given by ``diagonals``; ``rhs`` is ``[..., M, N]``."""
    sup, main, sub = _three("tridiagonal_matmul", diagonals, diagonals_format)
    check_dtype("TridiagonalMatMul", main, FLOATS_COMPLEX, "maindiag")
    b = convert_to_tensor(rhs, dtype=main.dtype, name="rhs")
    rows = [array_ops.expand_dims(t, -2) for t in (sup, main, sub)]
    return make_tensor("TridiagonalMatMul", [*rows, b], name=name or "TridiagonalMatMul")


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact", transpose_rhs: bool = False,
                      conjugate_rhs: bool = False, name: str | None = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """Solves ``A X = rhs`` for tridiagonal ``A``; ``rhs`` is ``[..., M]`` or ``[..., M, K]``
    (``[..., K, M]`` with ``transpose_rhs``)."""
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    with name_scope(name, "tridiagonal_solve"):
        diags = array_ops.stack(list(_three("tridiagonal_solve", diagonals, diagonals_format)), axis=-2)
        check_dtype("TridiagonalSolve", diags, FLOATS_COMPLEX, "diagonals")
        b = convert_to_tensor(rhs, dtype=diags.dtype, name="rhs")
        attrs = {"partial_pivoting": bool(partial_pivoting), "perturb_singular": bool(perturb_singular)}
        if b.shape.rank is not None and diags.shape.rank is not None and b.shape.rank == diags.shape.rank - 1:
            b = conj(b) if conjugate_rhs else b
            return array_ops.squeeze(make_tensor("TridiagonalSolve", [diags, array_ops.expand_dims(b, -1)], attrs),
                                     [-1])
        if transpose_rhs:
            b = matrix_transpose(b, conjugate=conjugate_rhs)
        elif conjugate_rhs:
            b = conj(b)
        return make_tensor("TridiagonalSolve", [diags, b], attrs, name="TridiagonalSolve")


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
