"""Kernels of ``flowmesh/ops/tridiagonal_ops.py``: the banded product in O(M N) and the solve
through the dense banded matrix (``torch.linalg.solve_ex``, LU with partial pivoting)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.registry import KernelContext, kernel, simple_kernel


def _shift_up(x: Any) -> Any:
    return torch.cat([x[..., 1:, :], torch.zeros_like(x[..., :1, :])], dim=-2)


def _shift_down(x: Any) -> Any:
    return torch.cat([torch.zeros_like(x[..., :1, :]), x[..., :-1, :]], dim=-2)


def _matmul(superdiag: Any, maindiag: Any, subdiag: Any, rhs: Any) -> Any:
    column = lambda t: t.transpose(-1, -2)  # noqa: E731 - [..., 1, M] -> [..., M, 1]
    return column(maindiag) * rhs + column(superdiag) * _shift_up(rhs) + column(subdiag) * _shift_down(rhs)


simple_kernel("TridiagonalMatMul", _matmul)


@kernel("TridiagonalSolve")
def _solve(ctx: KernelContext):
    name = ctx.op.name

    def run(diags: Any, rhs: Any) -> Any:
        superdiag, maindiag, subdiag = diags[..., 0, :], diags[..., 1, :], diags[..., 2, :]
        dense = (torch.diag_embed(maindiag) + torch.diag_embed(superdiag[..., :-1], offset=1)
                 + torch.diag_embed(subdiag[..., 1:], offset=-1))
        if dense.shape[-1] == 0:
            return rhs.clone()
        solution, info = torch.linalg.solve_ex(dense, rhs)
        if bool((info != 0).any()):
            raise InvalidArgumentError(f"TridiagonalSolve '{name}': the tridiagonal matrix is not invertible "
                                       f"(diagonals of shape {list(diags.shape)})")
        return solution

    return run
