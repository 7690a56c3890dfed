"""Kernels of ``ops/unigram_sampling_ops.py`` (host NumPy; TensorFlow's ``FixedUnigramSampler``
and ``UnigramSampler`` weights, with the shared draw/expected-count logic of
``kernels/candidate_sampling_ops.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.formats import filesystem as fs
from flowmesh.kernels.candidate_sampling_ops import _sampler_kernel
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _vocab_counts(ctx: KernelContext, path: str) -> list[float]:
    counts = []
    for number, line in enumerate(fs.read_bytes(path).decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            counts.append(float(line.split(",")[-1]))
        except ValueError:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): line {number} of {path} does "
                                       f"not end in a count: {line!r}") from None
    return counts


def _fixed_weights(ctx: KernelContext) -> np.ndarray:
    shards, shard, distortion = ctx.attr("num_shards"), ctx.attr("shard"), ctx.attr("distortion")
    reserved = ctx.attr("num_reserved_ids")
    vocab = ctx.attr("vocab_file")
    counts = _vocab_counts(ctx, vocab) if vocab else list(ctx.attr("unigrams"))
    if vocab and len(counts) + reserved != ctx.attr("range_max"):
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): {vocab} has {len(counts)} "
                                   f"entries, + {reserved} reserved ids != range_max "
                                   f"{ctx.attr('range_max')}")
    weights = [0.0 for word in range(reserved) if word % shards == shard]
    weights += [float(c) ** distortion for word, c in enumerate(counts, reserved)
                if word % shards == shard]
    return np.asarray(weights, np.float64)


def _weighted(ctx: KernelContext, weights: np.ndarray):
    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice(len(weights), size=n, p=weights / weights.sum())

    def prob(k: np.ndarray) -> np.ndarray:
        inside = (k >= 0) & (k < len(weights))
        return np.where(inside, weights[np.clip(k, 0, len(weights) - 1)], 0.0) / weights.sum()

    return _sampler_kernel(ctx, draw, prob)


@kernel("FixedUnigramCandidateSampler", device_types=("CPU",))
def _fixed_unigram(ctx: KernelContext):
    weights = _fixed_weights(ctx)
    if weights.sum() <= 0:
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): the unigram counts sum to 0")
    return _weighted(ctx, weights)


@kernel("LearnedUnigramCandidateSampler", device_types=("CPU",))
def _learned_unigram(ctx: KernelContext):
    counts = np.ones(ctx.attr("range_max"), np.float64)
    sample = _weighted(ctx, counts)

    def run(true: torch.Tensor) -> Any:
        out = sample(true)
        classes = true.cpu().numpy().reshape(-1)
        np.add.at(counts, classes[(classes >= 0) & (classes < len(counts))], 1.0)
        return out
    return run
