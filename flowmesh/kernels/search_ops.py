"""Kernels of ``flowmesh/ops/search_ops.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _bound(right: bool):
    def factory(ctx: KernelContext):
        out = torch_dtype(ctx.attr("out_type"))

        def run(seq: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
            if seq.dim() == 0 or seq.shape[:-1] != values.shape[:-1]:
                raise InvalidArgumentError(f"searchsorted: sorted_sequence {list(seq.shape)} and values "
                                           f"{list(values.shape)} must agree on all but the last dimension")
            if seq.dim() == 1:
                return torch.searchsorted(seq, values, right=right).to(out)
            return torch.searchsorted(seq.contiguous(), values.contiguous(), right=right).to(out)

        return run

    return factory


kernel("LowerBound")(_bound(False))
kernel("UpperBound")(_bound(True))


@kernel("ListDiff", device_types=("CPU",))
def _list_diff(ctx: KernelContext):
    out_idx = torch_dtype(ctx.attr("out_idx"))

    def run(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() != 1 or y.dim() != 1:
            raise InvalidArgumentError(f"setdiff1d: x and y must be 1-D, got {list(x.shape)} and {list(y.shape)}")
        keep = ~torch.from_numpy(np.isin(x.numpy(), y.numpy()))
        return x[keep], torch.nonzero(keep).reshape(-1).to(out_idx)

    return run


@kernel("Bincount")
def _bincount(ctx: KernelContext):
    def run(arr: torch.Tensor, size: Any, weights: torch.Tensor) -> torch.Tensor:
        n = int(size)
        if bool((arr < 0).any()):
            raise InvalidArgumentError("bincount: input arr must be non-negative")
        flat, w = arr.reshape(-1).long(), weights.reshape(-1)
        keep = flat < n
        out = torch.zeros(n, dtype=w.dtype, device=w.device)
        return out.index_add_(0, flat[keep], w[keep])

    return run
