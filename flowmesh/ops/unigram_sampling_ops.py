"""Unigram candidate samplers: ``FixedUnigramCandidateSampler`` (classes drawn by given counts,
or the last column of a vocabulary file, raised to ``distortion``; reserved ids and shards as
TensorFlow) and ``LearnedUnigramCandidateSampler`` (by counts of the true classes seen so far,
starting from 1 each, updated after every draw). Outputs and expected counts as the other
candidate samplers (``ops/candidate_sampling_ops.py``); kernels in
``kernels/unigram_sampling_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops.candidate_sampling_ops import Candidates, _sampler, _sampler_shape

register_op("FixedUnigramCandidateSampler", _sampler_shape, not_differentiable=True, stateful=True)
register_op("LearnedUnigramCandidateSampler", _sampler_shape, not_differentiable=True, stateful=True)


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                    unique: bool, range_max: int, vocab_file: str = "",
                                    distortion: float = 1.0, num_reserved_ids: int = 0,
                                    num_shards: int = 1, shard: int = 0,
                                    unigrams: Sequence[float] = (), seed: Any = None,
                                    name: str | None = None) -> Candidates:
    """Samples classes with probability ``count ** distortion / total`` from ``unigrams`` or
    ``vocab_file`` (``tf.random.fixed_unigram_candidate_sampler``); the first
    ``num_reserved_ids`` classes get probability 0; with ``num_shards`` only the classes of
    ``shard`` are kept.

    Raises:
        InvalidArgumentError: neither or both of ``vocab_file``/``unigrams``, a bad shard, or a
            vocabulary size other than ``range_max``.
    """
    if bool(vocab_file) == bool(len(unigrams)):
        raise InvalidArgumentError("fixed_unigram_candidate_sampler: give exactly one of "
                                   "vocab_file and unigrams")
    if not 0 <= int(shard) < int(num_shards):
        raise InvalidArgumentError(f"fixed_unigram_candidate_sampler: need 0 <= shard < num_shards, "
                                   f"got shard={shard}, num_shards={num_shards}")
    if unigrams and len(unigrams) + int(num_reserved_ids) != int(range_max):
        raise InvalidArgumentError(
            f"fixed_unigram_candidate_sampler: len(unigrams) + num_reserved_ids must equal range_max, "
            f"got {len(unigrams)} + {num_reserved_ids} != {range_max}")
    extra = {"vocab_file": str(vocab_file), "distortion": float(distortion),
             "num_reserved_ids": int(num_reserved_ids), "num_shards": int(num_shards),
             "shard": int(shard), "unigrams": [float(u) for u in unigrams]}
    return _sampler("FixedUnigramCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name, extra)


def learned_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int,
                                      unique: bool, range_max: int, seed: Any = None,
                                      name: str | None = None) -> Candidates:
    """Samples classes by how often they appeared among the true classes of earlier runs of
    this op (each starts with a count of 1; a run's true classes count after its draw)
    (``tf.random.learned_unigram_candidate_sampler``)."""
    return _sampler("LearnedUnigramCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name)
