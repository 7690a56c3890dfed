"""Kernels of ``flowmesh/ops/linalg_solve_ops.py`` (``torch.linalg``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _adjoint(x: Any) -> Any:
    return x.mH


@kernel("MatrixInverse")
def _inverse(ctx: KernelContext):
    adjoint = bool(ctx.attr("adjoint", False))

    def inverse(x: Any) -> Any:
        out, info = torch.linalg.inv_ex(_adjoint(x) if adjoint else x)
        if bool((info != 0).any()):
            raise InvalidArgumentError(
                f"Input is not invertible (matrix of shape {list(x.shape)}, dtype "
                f"{str(x.dtype).replace('torch.', '')}).")
        return out

    return inverse


@kernel("MatrixSolve")
def _solve(ctx: KernelContext):
    adjoint = bool(ctx.attr("adjoint", False))

    def solve(a: Any, b: Any) -> Any:
        out, info = torch.linalg.solve_ex(_adjoint(a) if adjoint else a, b)
        if bool((info != 0).any()):
            raise InvalidArgumentError(
                f"Input matrix is not invertible (matrix {list(a.shape)}, rhs {list(b.shape)}).")
        return out

    return solve
