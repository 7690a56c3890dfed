"""Kernels of ``flowmesh/ops/matrix_function_ops.py``: ``torch.linalg.matrix_exp``; the
Denman-Beavers iteration for the square root (in float64/complex128, until the iterates stop
moving); the eigendecomposition ``V diag(log l) V^-1`` for the logarithm."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel

simple_kernel("MatrixExponential", torch.linalg.matrix_exp)

_WIDE = {torch.float16: torch.float64, torch.bfloat16: torch.float64, torch.float32: torch.float64,
         torch.complex64: torch.complex128}


def _denman_beavers(a: Any, name: str) -> Any:
    y, z = a, torch.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand_as(a).clone()
    for _ in range(100):
        y_next = 0.5 * (y + torch.linalg.inv(z))
        z = 0.5 * (z + torch.linalg.inv(y))
        change = (y_next - y).abs().amax() if y.numel() else torch.tensor(0.0)
        y = y_next
        if float(change) <= 1e-15 * max(float(y.abs().amax()) if y.numel() else 0.0, 1.0):
            return y
    if not bool(torch.isfinite(y).all()):
        raise InvalidArgumentError(f"MatrixSquareRoot '{name}': the iteration diverged; the input must have no "
                                   "eigenvalues on the closed negative real axis (e.g. not singular).")
    return y


@kernel("MatrixSquareRoot")
def _sqrtm(ctx: KernelContext):
    name = ctx.op.name

    def run(x: Any) -> Any:
        if x.shape[-1] == 0:
            return x.clone()
        wide = x.to(_WIDE.get(x.dtype, x.dtype))
        try:
            return _denman_beavers(wide, name).to(x.dtype)
        except RuntimeError as exc:  # torch.linalg.inv of a singular iterate
            raise InvalidArgumentError(f"MatrixSquareRoot '{name}': {exc} (the input must not be singular)") from None

    return run


@kernel("MatrixLogarithm")
def _logm(ctx: KernelContext):
    def run(x: Any) -> Any:
        wide = x.to(_WIDE.get(x.dtype, x.dtype))
        values, vectors = torch.linalg.eig(wide)
        logs = torch.diag_embed(torch.log(values))
        return (vectors @ logs @ torch.linalg.inv(vectors)).to(x.dtype)

    return run
