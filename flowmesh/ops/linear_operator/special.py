"""Structured square operators: ``LinearOperatorToeplitz`` (constant diagonals from a first
column and row), ``LinearOperatorTridiag`` (three diagonals), ``LinearOperatorHouseholder``
(a reflection ``I - 2 v v^H / |v|^2``), ``LinearOperatorPermutation`` (``(A x)_i =
x_perm[i]``) and ``LinearOperatorLowRankUpdate`` (``L + U D V^H``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if
from flowmesh.ops.tridiagonal_ops import _as_dense


def _vector_shape(v: Tensor) -> TensorShape:
    return TensorShape(None) if v.shape.rank is None else v.shape.concatenate(v.shape[-1:])


class LinearOperatorToeplitz(LinearOperator):
    """``A[i, j] = col[i - j]`` for ``i >= j`` and ``row[j - i]`` above (``row[0]`` ignored)."""

    def __init__(self, col: Any, row: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorToeplitz"):
        self._col = convert_to_tensor(col, name="col")
        self._row = convert_to_tensor(row, dtype=self._col.dtype, name="row")
        n = self._col.shape.as_list()[-1] if self._col.shape.rank else None
        if n is None:
            raise ValueError(f"{name}: the length of col must be static, got shape {self._col.shape}")
        self._n = n
        super().__init__(self._col.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name,
                         {"col": col, "row": row})

    col = property(lambda self: self._col)
    row = property(lambda self: self._row)

    def _shape(self) -> TensorShape:
        batch = TensorShape(None) if self._col.shape.rank is None else self._col.shape[:-1]
        return batch.concatenate([self._n, self._n])

    def _to_dense(self) -> Tensor:
        n = self._n
        col, row = self._col, self._row
        if col.shape.rank is not None and row.shape.rank is not None and col.shape.rank != row.shape.rank:
            zeros = array_ops.zeros_like(col[..., :1]) + array_ops.zeros_like(row[..., :1])
            col, row = col + zeros, row + zeros
        values = array_ops.concat([manip_ops.reverse(row[..., 1:], [-1]) + array_ops.zeros_like(col[..., 1:]),
                                   col + array_ops.zeros_like(row)], axis=-1)
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + (n - 1)
        return gather(values, convert_to_tensor(index.astype(np.int32)), axis=-1)


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal operator in TensorFlow's ``compact``/``sequence``/``matrix`` formats
    (see :func:`flowmesh.linalg.tridiagonal_solve`)."""

    def __init__(self, diagonals: Any, diagonals_format: str = "compact", is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorTridiag"):
        self._dense = _as_dense(name, diagonals, diagonals_format)
        self._diagonals, self._format = diagonals, diagonals_format
        super().__init__(self._dense.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name,
                         {"diagonals": diagonals, "diagonals_format": diagonals_format})

    diagonals = property(lambda self: self._diagonals)
    diagonals_format = property(lambda self: self._format)

    def _shape(self) -> TensorShape:
        return self._dense.shape

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self._dense)

    def _to_dense(self) -> Tensor:
        return self._dense


class LinearOperatorHouseholder(LinearOperator):
    """``A = I - 2 v v^H / (v^H v)`` for ``v = reflection_axis`` ``[..., N]`` (self-adjoint,
    its own inverse, determinant -1)."""

    def __init__(self, reflection_axis: Any, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorHouseholder"):
        if is_self_adjoint is False or is_non_singular is False or is_positive_definite:
            raise ValueError(f"{name}: a reflection is self-adjoint, non-singular and not positive definite")
        self._v = convert_to_tensor(reflection_axis, name="reflection_axis")
        super().__init__(self._v.dtype, None, True, True, False, True, name, {"reflection_axis": reflection_axis})

    reflection_axis = property(lambda self: self._v)

    def _shape(self) -> TensorShape:
        return _vector_shape(self._v)

    def _shape_tensor(self) -> Tensor:
        shape = array_ops.shape(self._v)
        return array_ops.concat([shape, shape[-1:]], 0)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        v = array_ops.expand_dims(self._v, -1)
        norm2 = reduction_ops.reduce_sum(math_ops.abs(self._v) ** 2 if self.dtype.is_complex else self._v * self._v,
                                         axis=-1)
        norm2 = cast_ops.cast(norm2, self.dtype)[..., None, None]
        return x - 2.0 * v * matmul(v, x, adjoint_a=True) / norm2

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self) -> Tensor:
        return -array_ops.ones(array_ops.shape(self._v)[:-1], dtype=self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros(array_ops.shape(self._v)[:-1], dtype=self.dtype.real_dtype)


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix with ``A[i, perm[i]] = 1`` (``perm`` ``[..., N]`` integers)."""

    def __init__(self, perm: Any, dtype: Any = dtypes.float32, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorPermutation"):
        self._perm = convert_to_tensor(perm, name="perm")
        if self._perm.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"{name}: perm must be int32 or int64, got {self._perm.dtype.name}")
        super().__init__(dtypes.as_dtype(dtype), None, True, is_self_adjoint, is_positive_definite, True, name,
                         {"perm": perm, "dtype": dtype})

    perm = property(lambda self: self._perm)

    def _shape(self) -> TensorShape:
        return _vector_shape(self._perm)

    def _shape_tensor(self) -> Tensor:
        shape = array_ops.shape(self._perm)
        return array_ops.concat([shape, shape[-1:]], 0)

    def _to_dense(self) -> Tensor:
        return manip_ops.one_hot(self._perm, array_ops.shape(self._perm)[-1], dtype=self.dtype)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, not adjoint, adjoint_arg)

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros(array_ops.shape(self._perm)[:-1], dtype=self.dtype.real_dtype)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``A = base_operator + U diag(diag_update) V^H`` (``V = U`` and ``diag_update = 1`` by
    default) for ``U``, ``V`` ``[..., M, K]`` / ``[..., N, K]``."""

    def __init__(self, base_operator: LinearOperator, u: Any, diag_update: Any = None, v: Any = None,
                 is_diag_update_positive: bool | None = None, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorLowRankUpdate"):
        dtype = base_operator.dtype
        self._base = base_operator
        self._u = convert_to_tensor(u, dtype=dtype, name="u")
        self._v = self._u if v is None else convert_to_tensor(v, dtype=dtype, name="v")
        self._diag = None if diag_update is None else convert_to_tensor(diag_update, dtype=dtype, name="diag_update")
        if v is None and base_operator.is_self_adjoint and is_self_adjoint is None:
            is_self_adjoint = True
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         {"base_operator": base_operator, "u": u, "diag_update": diag_update, "v": v,
                          "is_diag_update_positive": is_diag_update_positive})

    base_operator = property(lambda self: self._base)
    u = property(lambda self: self._u)
    v = property(lambda self: self._v)
    diag_update = property(lambda self: self._diag)
    is_diag_update_positive = property(lambda self: self._parameters["is_diag_update_positive"])

    @property
    def diag_operator(self) -> LinearOperator:
        """``D`` as an operator (the identity when no ``diag_update`` was given)."""
        from flowmesh.ops.linear_operator.diag import LinearOperatorDiag
        from flowmesh.ops.linear_operator.identity import LinearOperatorIdentity

        if self._diag is None:
            return LinearOperatorIdentity(array_ops.shape(self._u)[-1], dtype=self.dtype)
        return LinearOperatorDiag(self._diag, is_positive_definite=self.is_diag_update_positive)

    def _shape(self) -> TensorShape:
        return self._base.shape

    def _shape_tensor(self) -> Tensor:
        return self._base.shape_tensor()

    def _scaled(self, t: Tensor, adjoint: bool) -> Tensor:
        if self._diag is None:
            return t
        d = conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return t * array_ops.expand_dims(d, -2)

    def _to_dense(self) -> Tensor:
        return self._base.to_dense() + matmul(self._scaled(self._u, False), self._v, adjoint_b=True)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        update = matmul(self._scaled(left, adjoint), matmul(right, x, adjoint_a=True))
        return self._base.matmul(x, adjoint=adjoint) + update


