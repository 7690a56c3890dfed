"""``tf.io.parse_sequence_example``: a vector of serialized ``SequenceExample``s parsed into
batched context features, feature lists padded to the longest example, and each dense feature
list's length per example. One op (``ParseSequenceExampleBatch``, flowmesh's; its kernel runs
``ParseSingleSequenceExample``'s decoding per record and batches the results) with the same
feature-spec attrs as ``parse_single_sequence_example``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_op
from flowmesh.ops.parsing_config import FixedLenFeature
from flowmesh.ops.parsing_ops import _dense_specs, _sparse_specs, _specs_to_attrs, _unpack


def _batch_shape(inputs: Sequence[Any], attrs: dict[str, Any]) -> list:
    batch = inputs[0].shape.as_list()[0] if inputs[0].shape.rank == 1 else None
    context = _sparse_specs(len(attrs["context_sparse_keys"]), 2, attrs["context_sparse_types"])
    context += _dense_specs(attrs, "context_dense_", [batch])
    lists = _sparse_specs(len(attrs["feature_list_sparse_keys"]), 3, attrs["feature_list_sparse_types"])
    lists += _dense_specs(attrs, "feature_list_dense_", [batch, None])
    lengths = [(dtypes.int64, TensorShape([batch]))] * len(attrs["feature_list_dense_keys"])
    return context + lists + lengths


register_op("ParseSequenceExampleBatch", _batch_shape, not_differentiable=True)


def parse_sequence_example(serialized: Any, context_features: Mapping[str, Any] | None = None,
                           sequence_features: Mapping[str, Any] | None = None,
                           example_names: Any = None, name: str | None = None
                           ) -> tuple[dict, dict, dict]:
    """Parses a vector of serialized SequenceExamples (``tf.io.parse_sequence_example``).

    Returns:
        ``(context, feature_lists, lengths)``: context features ``[batch, ...]`` (or
        ``SparseTensor``s ``[batch, n]``), ``FixedLenSequenceFeature`` lists ``[batch, time,
        ...]`` padded with zeros / empty strings (with a ``default_value``, which TensorFlow
        rejects here, by that value), ``VarLenFeature``
        lists as ``SparseTensor``s ``[batch, time, n]``, and for each dense list its length
        per example (int64 ``[batch]``).

    Raises:
        ValueError: no features, or a ``FixedLenFeature`` among the sequence features.
    """
    context_features, sequence_features = context_features or {}, sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features: pass context_features and/or sequence_features")
    for key, spec in sequence_features.items():
        if isinstance(spec, FixedLenFeature):
            raise ValueError(f"Feature list '{key}': use FixedLenSequenceFeature (or VarLenFeature) "
                             "in sequence_features, not FixedLenFeature")
    tensor = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    if tensor.shape.rank not in (None, 1):
        raise ValueError(f"parse_sequence_example: serialized must be a vector, got shape "
                         f"{tensor.shape}; use parse_single_sequence_example for one record")
    attrs = _specs_to_attrs(context_features, "context_", sequence_ok=False)
    attrs.update(_specs_to_attrs(sequence_features, "feature_list_", sequence_ok=True, in_list=True))
    op = make_op("ParseSequenceExampleBatch", [tensor], attrs, name=name or "ParseSequenceExample")
    context, rest = _unpack(op.outputs, attrs, "context_")
    lists, rest = _unpack(rest, attrs, "feature_list_")
    lengths = dict(zip(attrs["feature_list_dense_keys"], rest))
    return context, lists, lengths
