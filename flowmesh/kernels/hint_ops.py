"""Kernels of ``flowmesh/ops/hint_ops.py``."""

from __future__ import annotations

import torch

from flowmesh.errors import FailedPreconditionError, InvalidArgumentError
from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("GuaranteeConst", lambda x: x)
simple_kernel("ParallelConcat", lambda *xs: torch.stack(xs))


def _check_pinned(x: torch.Tensor) -> torch.Tensor:
    if not torch.cuda.is_available():
        raise FailedPreconditionError(None, None, "CheckPinned: to check pinnedness, flowmesh needs torch with CUDA")
    if not x.is_pinned():
        raise InvalidArgumentError(None, None, f"CheckPinned: the tensor of shape {list(x.shape)} is not in "
                                               "pinned (page-locked) host memory")
    return x


simple_kernel("CheckPinned", _check_pinned)
