"""Kernels of ``flowmesh/ops/candidate_sampling_ops.py`` (host NumPy; TensorFlow's formulas
from ``core/kernels/range_sampler.cc`` for the expected counts)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _rng(ctx: KernelContext) -> np.random.Generator:
    seed, seed2 = ctx.attr("seed", 0), ctx.attr("seed2", 0)
    if seed == 0 and seed2 == 0:
        return np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    return np.random.default_rng([int(seed), int(seed2)])


def _expected(p: np.ndarray, num_sampled: int, num_tries: int, unique: bool) -> np.ndarray:
    if not unique or num_tries == num_sampled:
        return p * num_sampled
    return -np.expm1(num_tries * np.log1p(-p))


def _sampler_kernel(ctx: KernelContext, draw: Callable[[np.random.Generator, int], np.ndarray],
                    prob: Callable[[np.ndarray], np.ndarray]):
    rng = _rng(ctx)
    num_true, num_sampled, unique = ctx.attr("num_true"), ctx.attr("num_sampled"), ctx.attr("unique")

    def run(true: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        classes = true.cpu().numpy()
        if classes.ndim != 2 or classes.shape[1] != num_true:
            raise InvalidArgumentError(f"true_classes must be [batch_size, {num_true}], got {list(classes.shape)}")
        if not unique:
            sampled, tries = draw(rng, num_sampled), num_sampled
        else:
            seen: dict[int, None] = {}
            tries = 0
            while len(seen) < num_sampled:
                batch = draw(rng, num_sampled)
                for value in batch:
                    tries += 1
                    seen.setdefault(int(value))
                    if len(seen) == num_sampled:
                        break
            sampled = np.fromiter(seen, np.int64, num_sampled)
        true_count = _expected(prob(classes), num_sampled, tries, unique).astype(np.float32)
        sampled_count = _expected(prob(sampled), num_sampled, tries, unique).astype(np.float32)
        return (torch.from_numpy(sampled.astype(np.int64)), torch.from_numpy(true_count),
                torch.from_numpy(sampled_count))

    return run


@kernel("LogUniformCandidateSampler", device_types=("CPU",))
def _log_uniform(ctx: KernelContext):
    range_max = ctx.attr("range_max")
    log_range = math.log(range_max + 1)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return (np.exp(rng.random(n) * log_range).astype(np.int64) - 1) % range_max

    def prob(k: np.ndarray) -> np.ndarray:
        k = k.astype(np.float64)
        return np.log((k + 2.0) / (k + 1.0)) / log_range

    return _sampler_kernel(ctx, draw, prob)


@kernel("UniformCandidateSampler", device_types=("CPU",))
def _uniform(ctx: KernelContext):
    range_max = ctx.attr("range_max")
    return _sampler_kernel(ctx, lambda rng, n: rng.integers(0, range_max, n),
                           lambda k: np.full(k.shape, 1.0 / range_max))


@kernel("AllCandidateSampler", device_types=("CPU",))
def _all(ctx: KernelContext):
    num_sampled = ctx.attr("num_sampled")

    def run(true: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        shape = tuple(true.shape)
        return (torch.arange(num_sampled, dtype=torch.int64), torch.ones(shape, dtype=torch.float32),
                torch.ones(num_sampled, dtype=torch.float32))

    return run


@kernel("ComputeAccidentalHits", device_types=("CPU",))
def _accidental_hits(ctx: KernelContext):
    num_true = ctx.attr("num_true")

    def run(true: Any, sampled: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        classes, candidates = true.cpu().numpy(), sampled.cpu().numpy()
        if classes.ndim != 2 or classes.shape[1] != num_true:
            raise InvalidArgumentError(f"true_classes must be [batch_size, {num_true}], got {list(classes.shape)}")
        positions: dict[int, list[int]] = {}
        for j, value in enumerate(candidates.tolist()):
            positions.setdefault(value, []).append(j)
        rows, ids = [], []
        for i, row in enumerate(classes.tolist()):
            for value in row:
                for j in positions.get(value, ()):
                    rows.append(i)
                    ids.append(j)
        weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
        return (torch.tensor(rows, dtype=torch.int32), torch.tensor(ids, dtype=torch.int64),
                torch.from_numpy(weights))

    return run
