"""``tf.linalg.LinearOperator``: a matrix ``A`` (``[..., M, N]``) known by what it does, not
by its entries. Subclasses describe structure (diagonal, triangular, circulant, Kronecker
...) and override the methods that structure makes cheap; everything else falls back to
the dense matrix from :meth:`LinearOperator.to_dense`, built from graph ops, so results and
gradients are those of ``tf.linalg`` ops.

A subclass implements ``_shape()`` (a static ``TensorShape``) and at least one of
``_to_dense()`` / ``_matmul(x, adjoint, adjoint_arg)``; optional overrides: ``_solve``,
``_determinant``, ``_log_abs_determinant``, ``_diag_part``, ``_shape_tensor``.

=======================  ==================================================================
structure                class (file)
=======================  ==================================================================
dense / triangular       ``LinearOperatorFullMatrix``, ``LinearOperatorLowerTriangular``
diagonal / identity      ``LinearOperatorDiag``, ``LinearOperatorIdentity``,
                         ``LinearOperatorScaledIdentity``, ``LinearOperatorZeros``
derived                  ``LinearOperatorAdjoint``, ``LinearOperatorInversion``,
                         ``LinearOperatorComposition``
blocks                   ``LinearOperatorBlockDiag``, ``LinearOperatorBlockLowerTriangular``,
                         ``LinearOperatorKronecker``
special matrices         ``LinearOperatorCirculant`` (1-3-D), ``LinearOperatorToeplitz``,
                         ``LinearOperatorTridiag``, ``LinearOperatorHouseholder``,
                         ``LinearOperatorPermutation``, ``LinearOperatorLowRankUpdate``
=======================  ==================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, check_ops, complex_ops, math_ops, reduction_ops
from flowmesh.ops.linalg_decomp_ops import adjoint as _adjoint_matrix
from flowmesh.ops.linalg_decomp_ops import det, self_adjoint_eigvals, slogdet
from flowmesh.ops.linalg_ops import eye, matmul, matrix_diag_part
from flowmesh.ops.linalg_solve_ops import matrix_solve

# Derived operators (adjoint, inverse, composition, lower triangular), registered by their
# modules when ``flowmesh.ops.linear_operator`` is imported: the base class builds them
# without importing its own subclasses.
DERIVED: dict[str, type] = {}


def adjoint_if(x: Tensor, flag: bool) -> Tensor:
    """``adjoint(x)`` when ``flag``, else ``x``."""
    return _adjoint_matrix(x) if flag else x


class LinearOperator:
    """Base class of TensorFlow's linear operators (see the module docstring).

    Args:
        dtype: the operator's dtype.
        graph_parents: ignored (TensorFlow's deprecated argument).
        is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints the caller
            promises (``None``: unknown); a positive definite operator is non-singular.
        name: the name scope of the operator's ops.
        parameters: the constructor arguments (``self.parameters``).

    Raises:
        ValueError: for contradictory hints (positive definite but singular).
    """

    def __init__(self, dtype: Any, graph_parents: Any = None, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None, parameters: dict | None = None):
        if is_positive_definite and is_non_singular is False:
            raise ValueError(f"{type(self).__name__}: a positive definite operator is always non-singular")
        if is_positive_definite:
            is_non_singular = True
        if is_non_singular and is_square is False:
            raise ValueError(f"{type(self).__name__}: a non-singular operator is always square")
        if is_non_singular or is_self_adjoint:
            is_square = True if is_square is None else is_square
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._is_non_singular, self._is_self_adjoint = is_non_singular, is_self_adjoint
        self._is_positive_definite, self._is_square_hint = is_positive_definite, is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})
        self._graph_parents = list(graph_parents or [])

    # --- hints and names -----------------------------------------------------------------------
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    parameters = property(lambda self: dict(self._parameters))
    graph_parents = property(lambda self: list(self._graph_parents))
    is_non_singular = property(lambda self: self._is_non_singular)
    is_self_adjoint = property(lambda self: self._is_self_adjoint)
    is_positive_definite = property(lambda self: self._is_positive_definite)

    @property
    def is_square(self) -> bool | None:
        """Whether the operator is square (from the hint, else from the static shape)."""
        if self._is_square_hint is not None:
            return self._is_square_hint
        m, n = self.range_dimension.value, self.domain_dimension.value
        return None if m is None or n is None else m == n

    def name_scope(self, name: str | None = None) -> Any:
        return name_scope(f"{self._name}/{name}" if name else self._name)

    # --- shapes ------------------------------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        """The static shape ``batch_shape + [M, N]``."""
        return self._shape()

    def _shape(self) -> TensorShape:
        return self._to_dense().shape

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        """The dynamic shape ``batch_shape + [M, N]`` (int32)."""
        with self.name_scope(name):
            if self.shape.is_fully_defined():
                return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32)
            return self._shape_tensor()

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self.to_dense())

    batch_shape = property(lambda self: TensorShape(None) if self.shape.rank is None else self.shape[:-2])
    tensor_rank = property(lambda self: self.shape.rank)
    domain_dimension = property(lambda self: self._dim(-1))
    range_dimension = property(lambda self: self._dim(-2))

    def _dim(self, index: int) -> Any:
        from flowmesh.core.shapes import Dimension

        return Dimension(None) if self.shape.rank is None else self.shape.dims[index]

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        return self.shape_tensor(name)[:-2]

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> Tensor:
        return array_ops.size(self.shape_tensor(name))

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        return self.shape_tensor(name)[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        return self.shape_tensor(name)[-2]

    # --- the operator ------------------------------------------------------------------------
    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The dense matrix ``[..., M, N]``."""
        with self.name_scope(name):
            return self._to_dense()

    def _to_dense(self) -> Tensor:
        n = self.domain_dimension_tensor()
        identity = eye(n, dtype=self.dtype)
        batch = self.batch_shape
        if batch.rank is None or batch.rank:
            batch_zeros = array_ops.zeros(self.batch_shape_tensor(), dtype=self.dtype)
            identity = identity + array_ops.expand_dims(array_ops.expand_dims(batch_zeros, -1), -1)
        return self._matmul(identity, adjoint=False, adjoint_arg=False)

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul") -> Any:
        """``A @ x`` (``adjoint``: ``A^H @ x``; ``adjoint_arg``: ``x^H``); ``x`` may be an operator."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return DERIVED["composition"]([left, right])
        with self.name_scope(name):
            return self._matmul(self._arg(x), adjoint, adjoint_arg)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return matmul(self._to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        """``A @ x`` for vectors ``x`` ``[..., N]``."""
        with self.name_scope(name):
            column = array_ops.expand_dims(self._arg(x), -1)
            return array_ops.squeeze(self._matmul(column, adjoint, False), [-1])

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve") -> Any:
        """``X`` with ``A X = rhs`` (``adjoint``: ``A^H X = rhs``)."""
        if self.is_non_singular is False:
            raise NotImplementedError(f"{self.name}: exact solve not implemented for an operator that is "
                                      "expected to be singular")
        if self.is_square is False:
            raise NotImplementedError(f"{self.name}: exact solve not implemented for an operator that is "
                                      "expected to not be square")
        if isinstance(rhs, LinearOperator):
            left = self.inverse().adjoint() if adjoint else self.inverse()
            return DERIVED["composition"]([left, rhs.adjoint() if adjoint_arg else rhs])
        with self.name_scope(name):
            return self._solve(self._arg(rhs), adjoint, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        dense = self._to_dense()
        rhs = adjoint_if(rhs, adjoint_arg)
        dense, rhs = broadcast_batch(dense, rhs)
        return matrix_solve(dense, rhs, adjoint=adjoint)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        """``x`` with ``A x = rhs`` for vectors ``rhs`` ``[..., N]``."""
        with self.name_scope(name):
            column = array_ops.expand_dims(self._arg(rhs), -1)
            return array_ops.squeeze(self.solve(column, adjoint=adjoint), [-1])

    def _arg(self, x: Any) -> Tensor:
        t = convert_to_tensor(x, dtype=self.dtype, name="x")
        if t.dtype != self.dtype:
            raise TypeError(f"{self.name}: argument has dtype {t.dtype.name}, the operator {self.dtype.name}")
        return t

    def _check_square(self, what: str) -> None:
        if self.is_square is False:
            raise NotImplementedError(f"{self.name}: {what} is only defined for square operators "
                                      f"(shape {self.shape})")

    def determinant(self, name: str = "det") -> Tensor:
        """``det(A)`` per batch member."""
        self._check_square("determinant")
        with self.name_scope(name):
            return self._determinant()

    def _determinant(self) -> Tensor:
        return det(self._to_dense())

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """``log|det(A)|`` per batch member."""
        self._check_square("log_abs_determinant")
        with self.name_scope(name):
            return self._log_abs_determinant()

    def _log_abs_determinant(self) -> Tensor:
        if self.dtype.is_complex:
            return math_ops.log(math_ops.abs(self._determinant()))
        return slogdet(self._to_dense())[1]

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """The main diagonal ``[..., min(M, N)]``."""
        with self.name_scope(name):
            return self._diag_part()

    def _diag_part(self) -> Tensor:
        return matrix_diag_part(self._to_dense())

    def trace(self, name: str = "trace") -> Tensor:
        """The sum of the main diagonal."""
        with self.name_scope(name):
            return reduction_ops.reduce_sum(self._diag_part(), axis=-1)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        """``A + x`` for a dense ``x`` of the operator's shape."""
        with self.name_scope(name):
            return self._to_dense() + self._arg(x)

    def eigvals(self, name: str = "eigvals") -> Tensor:
        """The eigenvalues (only for operators hinted self-adjoint, as in TensorFlow)."""
        if not self.is_self_adjoint:
            raise NotImplementedError(f"{self.name}: eigvals only implemented for self-adjoint operators "
                                      "(pass is_self_adjoint=True if it is)")
        with self.name_scope(name):
            return self._eigvals()

    def _eigvals(self) -> Tensor:
        return self_adjoint_eigvals(self._to_dense())

    def cond(self, name: str = "cond") -> Tensor:
        """The condition number: the ratio of the largest to the smallest singular value."""
        from flowmesh.ops.svd_qr_ops import svd

        with self.name_scope(name):
            s = svd(self._to_dense(), compute_uv=False)
            return reduction_ops.reduce_max(s, axis=-1) / reduction_ops.reduce_min(s, axis=-1)

    # --- derived operators -------------------------------------------------------------------
    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The operator ``A^H``."""
        if self.is_self_adjoint:
            return self
        return DERIVED["adjoint"](self)

    H = property(adjoint)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The operator ``A^-1``.

        Raises:
            ValueError: when the operator is hinted singular or non-square.
        """
        if self.is_square is False:
            raise ValueError(f"{self.name}: cannot take the inverse of a non-square operator")
        if self.is_non_singular is False:
            raise ValueError(f"{self.name}: cannot take the inverse of a singular operator")
        return DERIVED["inversion"](self)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The lower triangular ``L`` with ``A = L L^H`` (for self-adjoint positive definite
        operators, as hinted)."""
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError(f"{self.name}: cholesky needs an operator hinted self-adjoint and positive definite")
        from flowmesh.ops.linalg_decomp_ops import cholesky

        with self.name_scope(name):
            return DERIVED["lower_triangular"](cholesky(self._to_dense()), is_non_singular=True)

    # --- assertions --------------------------------------------------------------------------
    def assert_non_singular(self, name: str = "assert_non_singular") -> Any:
        """An op failing when some ``|det(A)|`` is 0 (or not finite)."""
        with self.name_scope(name):
            value = math_ops.abs(self.determinant())
            return check_ops.assert_positive(value, message=f"{self.name} is singular")

    def assert_positive_definite(self, name: str = "assert_positive_definite") -> Any:
        """An op failing when the Hermitian part of ``A`` is not positive definite."""
        with self.name_scope(name):
            dense = self._to_dense()
            values = self_adjoint_eigvals(0.5 * (dense + _adjoint_matrix(dense)))
            return check_ops.assert_positive(complex_ops.real(values) if values.dtype.is_complex else values,
                                             message=f"{self.name} is not positive definite")

    def assert_self_adjoint(self, name: str = "assert_self_adjoint") -> Any:
        """An op failing when ``A != A^H``."""
        with self.name_scope(name):
            dense = self._to_dense()
            return check_ops.assert_equal(dense, _adjoint_matrix(dense), message=f"{self.name} is not self-adjoint")

    # --- tf.Module's surface (operators own no variables of their own) ----------------------
    variables = property(lambda self: ())
    trainable_variables = property(lambda self: ())
    non_trainable_variables = property(lambda self: ())
    submodules = property(lambda self: ())

    @classmethod
    def with_name_scope(cls, method: Any) -> Any:
        """Decorator running ``method`` inside the operator's name scope."""
        def wrapped(self: LinearOperator, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope(method.__name__):
                return method(self, *args, **kwargs)

        return wrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


def broadcast_batch(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` (both ``[..., R, C]``) broadcast to one batch shape, for kernels that
    need equal batch dimensions (``MatrixSolve``, ``MatrixTriangularSolve``)."""
    if a.shape.rank is not None and a.shape.rank == b.shape.rank and a.shape[:-2] == b.shape[:-2]:
        return a, b
    zeros_a = array_ops.zeros_like(a[..., :1, :1])
    zeros_b = array_ops.zeros_like(b[..., :1, :1])
    return a + zeros_b, b + zeros_a


def static_dims(*dims: Any) -> list:
    """Python ints (or None) for possibly tensor-valued dimensions."""
    from flowmesh.ops._builders import constant_value

    out = []
    for d in dims:
        if d is None or isinstance(d, (int, np.integer)):
            out.append(None if d is None else int(d))
        else:
            v = constant_value(convert_to_tensor(d))
            out.append(None if v is None else int(v))
    return out
