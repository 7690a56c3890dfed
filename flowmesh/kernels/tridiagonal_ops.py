"""Kernels of ``flowmesh/ops/tridiagonal_ops.py``: the banded product in O(M N) and the solve.

The solve is Gaussian elimination with partial pivoting, as TensorFlow's CPU kernel and
LAPACK's ``?gtsv`` do it: O(M) per system, one pass down the rows (a row interchange where
the subdiagonal entry is larger), one back substitution with two superdiagonals. It runs as a
loop over rows in NumPy, vectorised over the batch and the right-hand sides, so small systems
(M <= ``DENSE_SOLVE_MAX_SIZE``) go through the dense banded matrix instead
(``torch.linalg.solve_ex``, LU with partial pivoting: the same pivots, one batched call).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel


def _shift_up(x: Any) -> Any:
    return torch.cat([x[..., 1:, :], torch.zeros_like(x[..., :1, :])], dim=-2)


def _shift_down(x: Any) -> Any:
    return torch.cat([torch.zeros_like(x[..., :1, :]), x[..., :-1, :]], dim=-2)


def _matmul(superdiag: Any, maindiag: Any, subdiag: Any, rhs: Any) -> Any:
    column = lambda t: t.transpose(-1, -2)  # noqa: E731 - [..., 1, M] -> [..., M, 1]
    return column(maindiag) * rhs + column(superdiag) * _shift_up(rhs) + column(subdiag) * _shift_down(rhs)


simple_kernel("TridiagonalMatMul", _matmul)


DENSE_SOLVE_MAX_SIZE = 128
"""Systems up to this size are solved densely (one batched LU beats a loop over rows there)."""


def _singular(name: str, diags: Any) -> InvalidArgumentError:
    return InvalidArgumentError(f"TridiagonalSolve '{name}': the tridiagonal matrix is not invertible "
                                f"(diagonals of shape {list(diags.shape)})")


def _dense_solve(name: str, diags: Any, rhs: Any) -> Any:
    superdiag, maindiag, subdiag = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
    dense = (torch.diag_embed(maindiag) + torch.diag_embed(superdiag[..., :-1], offset=1)
             + torch.diag_embed(subdiag[..., 1:], offset=-1))
    solution, info = torch.linalg.solve_ex(dense, rhs)
    if bool((info != 0).any()):
        raise _singular(name, diags)
    return solution


def gtsv(diags: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """Solves the tridiagonal systems ``diags`` ``[B, 3, M]`` (compact rows) against ``rhs``
    ``[B, M, K]`` by elimination with partial pivoting (LAPACK's ``?gtsv``); ``None`` when a
    pivot is zero (a singular matrix)."""
    du = diags[:, 0, :].copy()          # A[i, i+1]
    d = diags[:, 1, :].copy()           # A[i, i]
    dl = diags[:, 2, 1:].copy()         # A[i+1, i]
    du2 = np.zeros_like(d)              # fill-in A[i, i+2] from row interchanges
    b = rhs.copy()
    m = d.shape[1]
    for i in range(m - 1):
        swap = np.abs(d[:, i]) < np.abs(dl[:, i])
        pivot = np.where(swap, dl[:, i], d[:, i])
        if not pivot.all():
            return None
        other = np.where(swap, d[:, i], dl[:, i])
        fact = other / pivot
        next_d, next_du = d[:, i + 1], du[:, i + 1] if i + 1 < m - 1 else np.zeros_like(fact)
        # Row i becomes the pivot row; row i+1 keeps the other one minus fact times it.
        d[:, i] = pivot
        row_du = np.where(swap, next_d, du[:, i])
        d[:, i + 1] = np.where(swap, du[:, i] - fact * next_d, next_d - fact * du[:, i])
        du2[:, i] = np.where(swap, next_du, 0)
        if i + 1 < m - 1:
            du[:, i + 1] = np.where(swap, -fact * next_du, next_du)
        du[:, i] = row_du
        top, bottom = b[:, i].copy(), b[:, i + 1].copy()
        pivot_b = np.where(swap[:, None], bottom, top)
        b[:, i] = pivot_b
        b[:, i + 1] = np.where(swap[:, None], top, bottom) - fact[:, None] * pivot_b
    if not d[:, m - 1].all():
        return None
    b[:, m - 1] /= d[:, m - 1, None]
    if m > 1:
        b[:, m - 2] = (b[:, m - 2] - du[:, m - 2, None] * b[:, m - 1]) / d[:, m - 2, None]
    for i in range(m - 3, -1, -1):
        b[:, i] = (b[:, i] - du[:, i, None] * b[:, i + 1] - du2[:, i, None] * b[:, i + 2]) / d[:, i, None]
    return b


@kernel("TridiagonalSolve")
def _solve(ctx: KernelContext):
    name = ctx.op.name

    def run(diags: Any, rhs: Any) -> Any:
        m = diags.shape[-1]
        if m == 0:
            return rhs.clone()
        if m <= DENSE_SOLVE_MAX_SIZE or diags.device.type != "cpu":
            return _dense_solve(name, diags, rhs)
        batch = torch.broadcast_shapes(diags.shape[:-2], rhs.shape[:-2])
        flat_diags = diags.expand(*batch, 3, m).reshape(-1, 3, m).numpy()
        flat_rhs = rhs.expand(*batch, *rhs.shape[-2:]).reshape(-1, *rhs.shape[-2:]).numpy()
        solution = gtsv(flat_diags, flat_rhs)
        if solution is None:
            raise _singular(name, diags)
        return torch.from_numpy(solution).reshape(*batch, *rhs.shape[-2:])

    return run
