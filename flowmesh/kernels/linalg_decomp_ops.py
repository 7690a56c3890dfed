"""Kernels of ``flowmesh/ops/linalg_decomp_ops.py`` (``torch.linalg``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel

simple_kernel("MatrixDeterminant", torch.linalg.det)


@kernel("LogMatrixDeterminant")
def _slogdet(ctx: KernelContext):
    return lambda x: tuple(torch.linalg.slogdet(x))


@kernel("Cholesky")
def _cholesky(ctx: KernelContext):
    def run(x: Any) -> Any:
        out, info = torch.linalg.cholesky_ex(x)
        if bool((info != 0).any()):
            raise InvalidArgumentError(f"Cholesky decomposition was not successful. The input might not be valid "
                                       f"(not symmetric positive definite; matrix of shape {list(x.shape)}).")
        return out

    return run


@kernel("MatrixTriangularSolve")
def _triangular(ctx: KernelContext):
    lower, adjoint = bool(ctx.attr("lower", True)), bool(ctx.attr("adjoint", False))

    def run(a: Any, b: Any) -> Any:
        tri = torch.tril(a) if lower else torch.triu(a)
        if adjoint:
            return torch.linalg.solve_triangular(tri.mH, b, upper=lower)
        return torch.linalg.solve_triangular(tri, b, upper=not lower)

    return run


@kernel("SelfAdjointEigV2")
def _eigh(ctx: KernelContext):
    compute_v = bool(ctx.attr("compute_v", True))

    def run(x: Any) -> tuple[Any, Any]:
        if compute_v:
            values, vectors = torch.linalg.eigh(x, UPLO="L")
            return values, vectors
        return torch.linalg.eigvalsh(x, UPLO="L"), torch.zeros(0, dtype=x.dtype, device=x.device)

    return run
