"""Kernels of ``flowmesh/ops/stateless_random_more_ops.py`` (torch samplers seeded from the
seed pair, as ``kernels/random_dist_ops.py`` seeds the other stateless ops)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.array_ops import as_ints
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.random_dist_ops import _seeded

_RANGES = {torch.int32: (-2**31, 2**31), torch.int64: (-2**63, 2**63 - 1), torch.uint32: (0, 2**32),
           torch.uint64: (0, 2**63 - 1)}


@kernel("StatelessRandomUniformFullInt")
def _full_int(ctx: KernelContext):
    dtype = ctx.torch_dtype(ctx.attr("dtype"))
    low, high = _RANGES[dtype]

    def sample(shape: Any, seed: Any) -> Any:
        return torch.randint(low, high, as_ints(shape), generator=_seeded(seed), dtype=torch.int64).to(dtype)

    return sample


@kernel("StatelessRandomBinomial")
def _binomial(ctx: KernelContext):
    dtype = ctx.torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any, counts: Any, probs: Any) -> Any:
        size = as_ints(shape)
        n = counts.double().expand(size).contiguous()
        p = probs.double().clamp(0.0, 1.0).expand(size).contiguous()
        return torch.binomial(n, p, generator=_seeded(seed)).to(dtype)

    return sample


@kernel("StatelessParameterizedTruncatedNormal")
def _truncated(ctx: KernelContext):
    dtype = ctx.torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any, means: Any, stddevs: Any, minvals: Any, maxvals: Any) -> Any:
        size = as_ints(shape)
        mean, std = means.double().expand(size), stddevs.double().expand(size)
        low = torch.special.ndtr((minvals.double().expand(size) - mean) / std)
        high = torch.special.ndtr((maxvals.double().expand(size) - mean) / std)
        u = torch.rand(size, generator=_seeded(seed), dtype=torch.float64)
        z = torch.special.ndtri((low + u * (high - low)).clamp(1e-300, 1.0 - 1e-16))
        out = mean + std * z
        return torch.minimum(torch.maximum(out, minvals.double().expand(size)), maxvals.double().expand(size)).to(dtype)

    return sample
