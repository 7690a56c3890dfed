"""Candidate sampling: ``tf.random.{log_uniform,uniform,all}_candidate_sampler`` and
``tf.nn.compute_accidental_hits`` (TensorFlow's op types and outputs).

A sampler draws ``num_sampled`` classes from ``[0, range_max)`` (without repeats when
``unique``) and returns ``(sampled_candidates, true_expected_count,
sampled_expected_count)``: how many times each true and each sampled class is expected to
be drawn, as TensorFlow computes it (``p * num_sampled``, or ``1 - (1 - p) ** num_tries``
for unique sampling, where ``num_tries`` counts the draws rejection needed). Log-uniform
(Zipfian) sampling has ``p(k) = log((k + 2) / (k + 1)) / log(range_max + 1)``.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op
from flowmesh.ops.random_ops import get_seed

Candidates = namedtuple("Candidates", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def _sampler_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    true = inputs[0]
    if true.shape.rank not in (None, 2):
        raise InvalidArgumentError(f"true_classes must be a [batch_size, num_true] matrix, got {true.shape}")
    batch = true.shape.as_list()[0] if true.shape.rank == 2 else None
    n = attrs["num_sampled"]
    return [(dtypes.int64, TensorShape([n])), (dtypes.float32, TensorShape([batch, attrs["num_true"]])),
            (dtypes.float32, TensorShape([n]))]


for _op in ("LogUniformCandidateSampler", "UniformCandidateSampler", "AllCandidateSampler"):
    register_op(_op, _sampler_shape, not_differentiable=True, stateful=True)


def _sampler(op_type: str, true_classes: Any, num_true: int, num_sampled: int, unique: bool,
             range_max: int | None, seed: Any, name: str | None,
             extra: dict[str, Any] | None = None) -> Candidates:
    true = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    if range_max is not None and unique and num_sampled > range_max:
        raise InvalidArgumentError(f"{op_type}: cannot draw {num_sampled} unique candidates from range_max "
                                   f"{range_max}")
    s1, s2 = get_seed(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "seed": s1 or 0, "seed2": s2 or 0}
    if range_max is not None:
        attrs["range_max"] = int(range_max)
    attrs.update(extra or {})
    return Candidates(*make_op(op_type, [true], attrs, name=name or op_type).outputs)


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Any = None, name: str | None = None) -> Candidates:
    """Samples classes from the log-uniform (Zipfian) distribution over ``[0, range_max)``."""
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max,
                    seed, name)


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                              range_max: int, seed: Any = None, name: str | None = None) -> Candidates:
    """Samples classes uniformly from ``[0, range_max)``."""
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                          seed: Any = None, name: str | None = None) -> Candidates:
    """"Samples" every class ``0 .. num_sampled - 1`` (expected counts 1), for testing."""
    return _sampler("AllCandidateSampler", true_classes, num_true, num_sampled, unique, None, seed, name)


def _hits_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.int32, TensorShape([None])), (dtypes.int64, TensorShape([None])),
            (dtypes.float32, TensorShape([None]))]


register_op("ComputeAccidentalHits", _hits_shape, not_differentiable=True)


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int, seed: Any = None,
                            name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Where a sampled candidate equals one of a row's true classes: ``(indices, ids,
    weights)`` with the row, the position in ``sampled_candidates`` and ``-FLT_MAX``."""
    with name_scope(name, "ComputeAccidentalHits", [true_classes, sampled_candidates]) as scope:
        true = convert_to_tensor(true_classes, dtype=dtypes.int64)
        sampled = convert_to_tensor(sampled_candidates, dtype=dtypes.int64)
        s1, s2 = get_seed(seed)
        attrs = {"num_true": int(num_true), "seed": s1 or 0, "seed2": s2 or 0}
        return tuple(make_op("ComputeAccidentalHits", [true, sampled], attrs, name=scope).outputs)
