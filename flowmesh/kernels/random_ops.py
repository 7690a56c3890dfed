"""Kernels of ``flowmesh/ops/random_ops.py``: one torch Generator per op per session."""

from __future__ import annotations

import os
from typing import Any

import torch

from flowmesh.kernels.array_ops import as_ints
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


def make_generator(ctx: KernelContext) -> torch.Generator:
    """A generator seeded from the op's (seed, seed2), or randomly when both are 0."""
    seed, seed2 = ctx.attr("seed", 0), ctx.attr("seed2", 0)
    generator = torch.Generator(device=ctx.torch_device)
    if seed == 0 and seed2 == 0:
        generator.manual_seed(int.from_bytes(os.urandom(8), "little") & (2**63 - 1))
    else:
        generator.manual_seed((seed * 2654435761 + seed2 * 40503 + seed2) % (2**63 - 1))
    return generator


@kernel("RandomStandardNormal", needs_step=False)
def _normal(ctx: KernelContext):
    gen, dtype, device = make_generator(ctx), torch_dtype(ctx.attr("dtype")), ctx.torch_device
    return lambda shape: torch.randn(as_ints(shape), generator=gen, dtype=dtype, device=device)


@kernel("RandomUniform")
def _uniform(ctx: KernelContext):
    gen, dtype, device = make_generator(ctx), torch_dtype(ctx.attr("dtype")), ctx.torch_device
    return lambda shape: torch.rand(as_ints(shape), generator=gen, dtype=dtype, device=device)


@kernel("TruncatedNormal")
def _truncated(ctx: KernelContext):
    gen, dtype, device = make_generator(ctx), torch_dtype(ctx.attr("dtype")), ctx.torch_device

    def sample(shape: Any) -> Any:
        out = torch.empty(as_ints(shape), dtype=torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype,
                          device=device)
        torch.nn.init.trunc_normal_(out, 0.0, 1.0, -2.0, 2.0, generator=gen)
        return out.to(dtype)

    return sample


@kernel("RandomUniformInt")
def _uniform_int(ctx: KernelContext):
    gen, device = make_generator(ctx), ctx.torch_device

    def sample(shape: Any, lo: Any, hi: Any) -> Any:
        from flowmesh.errors import InvalidArgumentError

        if int(lo) >= int(hi):
            raise InvalidArgumentError(f"Need minval < maxval, got {int(lo)} >= {int(hi)}")
        return torch.randint(int(lo), int(hi), as_ints(shape), generator=gen, dtype=lo.dtype, device=device)

    return sample


@kernel("RandomShuffle")
def _shuffle(ctx: KernelContext):
    gen = make_generator(ctx)

    def shuffle(x: Any) -> Any:
        if x.ndim == 0:
            return x
        if not isinstance(x, torch.Tensor):  # strings: an object array on the host
            return x[torch.randperm(x.shape[0], generator=gen).numpy()]
        return x[torch.randperm(x.shape[0], generator=gen, device=x.device)]

    return shuffle


@kernel("Multinomial")
def _multinomial(ctx: KernelContext):
    gen, dtype = make_generator(ctx), torch_dtype(ctx.attr("output_dtype"))

    def sample(logits: Any, num: Any) -> Any:
        probs = torch.softmax(logits.double(), dim=-1)
        return torch.multinomial(probs, int(num), replacement=True, generator=gen).to(dtype)

    return sample
