"""``tf.linalg.experimental.conjugate_gradient``: solves ``A x = rhs`` for a self-adjoint,
positive definite ``LinearOperator`` ``A`` by (preconditioned) conjugate gradients, batched
over the operator's and ``rhs``'s batch dimensions, in a ``while_loop`` (TensorFlow's
algorithm and stopping rule: at most ``max_iter`` steps, or until every residual norm is
at most ``tol * |rhs|``)."""

from __future__ import annotations

import collections
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.linalg_ops import norm
from flowmesh.ops.manip_ops import broadcast_dynamic_shape
from flowmesh.ops.while_loop import while_loop

CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def _dot(x: Tensor, y: Tensor) -> Tensor:
    return reduction_ops.reduce_sum(conj(x) * y if x.dtype.is_complex else x * y, axis=-1)


def conjugate_gradient(operator: Any, rhs: Any, preconditioner: Any = None, x: Any = None, tol: float = 1e-5,
                       max_iter: int = 20, name: str = "conjugate_gradient") -> CGState:
    """Conjugate-gradient solution of ``operator x = rhs``.

    Args:
        operator: a self-adjoint, positive definite ``tf.linalg.LinearOperator``.
        rhs: ``[..., N]`` right-hand sides.
        preconditioner: an optional ``LinearOperator`` approximating ``operator``'s inverse.
        x: an initial guess (default zeros).
        tol: the relative residual norm to stop at.
        max_iter: the most iterations.
        name: a name scope.

    Returns:
        ``CGState(i, x, r, p, gamma)``: the iterations run, the solution, the residual,
        the last search direction and the residual's (preconditioned) squared norm.

    Raises:
        ValueError: the operator is not declared self-adjoint and positive definite.
    """
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator.")

    def keep_going(i: Tensor, state: CGState) -> Tensor:
        return math_ops.logical_and(i < max_iter, reduction_ops.reduce_any(norm(state.r, axis=-1) > tol_t))

    def step(i: Tensor, state: CGState) -> tuple[Tensor, CGState]:
        z = operator.matvec(state.p)
        alpha = state.gamma / _dot(state.p, z)
        x_next = state.x + alpha[..., None] * state.p
        r = state.r - alpha[..., None] * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        gamma = _dot(r, q)
        beta = gamma / state.gamma
        return i + 1, CGState(i + 1, x_next, r, q + beta[..., None] * state.p, gamma)

    with name_scope(name):
        rhs = convert_to_tensor(rhs, name="rhs")
        batch = broadcast_dynamic_shape(array_ops.shape(rhs)[:-1], operator.batch_shape_tensor())
        if preconditioner is not None:
            batch = broadcast_dynamic_shape(batch, preconditioner.batch_shape_tensor())
        full_shape = array_ops.concat([batch, array_ops.shape(rhs)[-1:]], 0)
        r0 = reduction_ops.broadcast_to(rhs, full_shape)
        tol_t = tol * norm(r0, axis=-1)
        if x is None:
            x = array_ops.zeros(full_shape, dtype=rhs.dtype)
        else:
            x = convert_to_tensor(x, dtype=rhs.dtype, name="x")
            r0 = rhs - operator.matvec(x)
        p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
        i = convert_to_tensor(0, dtype=dtypes.int32)
        _, state = while_loop(keep_going, step, [i, CGState(i, x, r0, p0, _dot(r0, p0))])
        return CGState(*state)
