"""Kernels of ``flowmesh/ops/random_dist_ops.py``: torch's gamma/Poisson samplers and, for the
stateless ops (full-range integers, binomial and parameterized truncated normal included), a
generator seeded from the seed pair on every call."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.array_ops import as_ints
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.random_ops import make_generator


def _expand(alpha: torch.Tensor, shape: list[int]) -> torch.Tensor:
    return alpha.expand(*shape, *alpha.shape).contiguous()


@kernel("RandomGamma")
def _gamma(ctx: KernelContext):
    gen = make_generator(ctx)

    def sample(shape: Any, alpha: torch.Tensor) -> torch.Tensor:
        a = _expand(alpha.double(), as_ints(shape))
        return torch._standard_gamma(a, generator=gen).to(alpha.dtype)

    return sample


simple_kernel("RandomGammaGrad", lambda alpha, sample: torch._standard_gamma_grad(alpha, sample))


@kernel("RandomPoissonV2")
def _poisson(ctx: KernelContext):
    gen, dtype = make_generator(ctx), torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, rate: torch.Tensor) -> torch.Tensor:
        return torch.poisson(_expand(rate.double(), as_ints(shape)), generator=gen).to(dtype)

    return sample


def _seeded(seed: Any) -> torch.Generator:
    values = [int(v) for v in seed.reshape(-1).tolist()]
    if len(values) != 2:
        raise InvalidArgumentError(f"stateless seed must have shape [2], got {list(seed.shape)}")
    gen = torch.Generator()
    gen.manual_seed((values[0] * 0x9E3779B97F4A7C15 + values[1]) % (2**63 - 1))
    return gen


@kernel("StatelessRandomUniform")
def _s_uniform(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))
    return lambda shape, seed: torch.rand(as_ints(shape), generator=_seeded(seed), dtype=torch.float64).to(dtype)


@kernel("StatelessRandomNormal")
def _s_normal(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))
    return lambda shape, seed: torch.randn(as_ints(shape), generator=_seeded(seed), dtype=torch.float64).to(dtype)


@kernel("StatelessTruncatedNormal")
def _s_truncated(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any) -> torch.Tensor:
        out = torch.empty(as_ints(shape), dtype=torch.float64)
        torch.nn.init.trunc_normal_(out, 0.0, 1.0, -2.0, 2.0, generator=_seeded(seed))
        return out.to(dtype)

    return sample


@kernel("StatelessRandomUniformInt")
def _s_uniform_int(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any, lo: Any, hi: Any) -> torch.Tensor:
        if int(hi) <= int(lo):
            raise InvalidArgumentError(f"Need minval < maxval: {int(lo)} >= {int(hi)}")
        return torch.randint(int(lo), int(hi), as_ints(shape), generator=_seeded(seed), dtype=torch.int64).to(dtype)

    return sample


@kernel("StatelessMultinomial")
def _s_multinomial(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))

    def sample(logits: torch.Tensor, num: Any, seed: Any) -> torch.Tensor:
        probs = torch.softmax(logits.double(), dim=-1)
        return torch.multinomial(probs, int(num), replacement=True, generator=_seeded(seed)).to(dtype)

    return sample


@kernel("StatelessRandomGammaV2")
def _s_gamma(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any, alpha: torch.Tensor) -> torch.Tensor:
        a = alpha.double().expand(as_ints(shape)).contiguous()
        return torch._standard_gamma(a, generator=_seeded(seed)).to(dtype)

    return sample


@kernel("StatelessRandomPoisson")
def _s_poisson(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("dtype"))

    def sample(shape: Any, seed: Any, rate: torch.Tensor) -> torch.Tensor:
        return torch.poisson(rate.double().expand(as_ints(shape)).contiguous(), generator=_seeded(seed)).to(dtype)

    return sample


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
