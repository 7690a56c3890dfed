"""Small ``tf.linalg`` compositions, as TensorFlow's ``linalg_impl.py`` builds them:
``matrix_rank`` and ``pinv`` (from the SVD) and ``normalize`` (from ``norm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import FLOATS, check_dtype
from flowmesh.ops.linalg_ops import matmul, norm
from flowmesh.ops.select_ops import where
from flowmesh.ops.svd_qr_ops import svd


def _matrix(op_name: str, a: Any) -> Tensor:
    t = convert_to_tensor(a, name="a")
    check_dtype(op_name, t, FLOATS, "a")
    if t.shape.rank is not None and t.shape.rank < 2:
        raise ValueError(f"{op_name}: input `a` must have at least 2 dimensions (saw shape {t.shape})")
    return t


def _largest_dim(a: Tensor) -> Any:
    dims = a.shape.as_list()[-2:] if a.shape.rank else [None]
    if None not in dims:
        return float(max(dims))
    return cast_ops.cast(reduction_ops.reduce_max(array_ops.shape(a)[-2:]), a.dtype)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The number of singular values above ``tol`` (default ``eps * max(M, N) * max(s)``), int32."""
    with name_scope(name or "matrix_rank"):
        t = _matrix("matrix_rank", a)
        s = svd(t, compute_uv=False)
        if tol is None:
            eps = float(np.finfo(t.dtype.as_numpy_dtype).eps)
            tol = eps * _largest_dim(t) * reduction_ops.reduce_max(s, axis=-1, keepdims=True)
        return reduction_ops.reduce_sum(cast_ops.cast(math_ops.greater(s, tol), dtypes.int32), axis=-1)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values below ``rcond * max(s)`` (default
    ``rcond = 10 * max(M, N) * eps``) are treated as zero."""
    with name_scope(name or "pinv"):
        t = _matrix("pinv", a)
        if rcond is None:
            rcond = 10.0 * float(np.finfo(t.dtype.as_numpy_dtype).eps) * _largest_dim(t)
        s, left, right = svd(t, full_matrices=False, compute_uv=True)
        cutoff = rcond * reduction_ops.reduce_max(s, axis=-1)
        keep = math_ops.greater(s, array_ops.expand_dims(cutoff, -1))
        inverse_s = where(keep, 1.0 / where(keep, s, array_ops.ones_like(s)), array_ops.zeros_like(s))
        return matmul(right * array_ops.expand_dims(inverse_s, -2), left, adjoint_b=True)


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None  # noqa: A002
              ) -> tuple[Tensor, Tensor]:
    """``(tensor / norm, norm)`` with ``norm = tf.norm(tensor, ord, axis, keepdims=True)``."""
    with name_scope(name or "normalize"):
        t = convert_to_tensor(tensor, name="tensor")
        size = norm(t, ord=ord, axis=axis, keepdims=True)
        return t / size, size
