"""``RaggedFeature`` in the Example parsers: the spec becomes ``VarLenFeature``s for its value
key and its partitions' keys, and after parsing their values are split into a ``RaggedTensor``
(TensorFlow's ``_construct_tensors_for_composite_features``).

Partitions apply innermost first, as in TensorFlow. ``parse_single_example`` builds every
partition kind; ``parse_example`` (a batch) builds ``RowLengths`` partitions, whose values keep
their meaning when the examples' lists are concatenated, and then splits the result by example.
With no partitions, ``parse_single_example`` returns the values as a dense vector, as TensorFlow
does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowmesh.core import dtypes
from flowmesh.ops import cast_ops
from flowmesh.ops.parsing_config import RaggedFeature, VarLenFeature
from flowmesh.ops.ragged_tensor import RaggedTensor

_BY_KEY = {
    RaggedFeature.RowSplits: RaggedTensor.from_row_splits,
    RaggedFeature.RowLengths: RaggedTensor.from_row_lengths,
    RaggedFeature.RowStarts: RaggedTensor.from_row_starts,
    RaggedFeature.RowLimits: RaggedTensor.from_row_limits,
    RaggedFeature.ValueRowIds: RaggedTensor.from_value_rowids,
}


def _keys(key: str, spec: RaggedFeature) -> list[tuple[str, VarLenFeature]]:
    wanted = [(spec.value_key or key, VarLenFeature(spec.dtype))]
    return wanted + [(p.key, VarLenFeature(dtypes.int64)) for p in spec.partitions
                     if not isinstance(p, RaggedFeature.UniformRowLength)]


def expand(features: Mapping[str, Any], single: bool) -> tuple[dict[str, Any], dict[str, RaggedFeature]]:
    """``features`` without RaggedFeatures but with the VarLenFeatures they read, and the
    RaggedFeatures by key.

    Raises:
        ValueError: a key read with two different specs.
        NotImplementedError: in a batch, a partition other than ``RowLengths``.
    """
    plain = {k: v for k, v in features.items() if not isinstance(v, RaggedFeature)}
    ragged = {k: v for k, v in features.items() if isinstance(v, RaggedFeature)}
    for key, spec in ragged.items():
        if not single and any(not isinstance(p, RaggedFeature.RowLengths) for p in spec.partitions):
            raise NotImplementedError(
                f"RaggedFeature '{key}': parse_example builds RowLengths partitions only; parse each "
                "example with parse_single_example (or map it over the batch) for other partitions")
        for name, var in _keys(key, spec):
            if name in plain and name not in ragged and plain[name] != var:
                raise ValueError(f"RaggedFeature '{key}': feature '{name}' is also parsed as "
                                 f"{plain[name]}, which conflicts with {var}")
            plain[name] = var
    return plain, ragged


def _partitioned(values: Any, spec: RaggedFeature, parsed: dict[str, Any]) -> Any:
    for partition in reversed(spec.partitions):
        if isinstance(partition, RaggedFeature.UniformRowLength):
            length = cast_ops.cast(partition.length, spec.row_splits_dtype)
            values = RaggedTensor.from_uniform_row_length(values, length, validate=spec.validate)
            continue
        ids = cast_ops.cast(parsed[partition.key].values, spec.row_splits_dtype)
        values = _BY_KEY[type(partition)](values, ids, validate=spec.validate)
    return values


def construct(parsed: dict[str, Any], ragged: Mapping[str, RaggedFeature], requested: Mapping[str, Any],
              single: bool) -> dict[str, Any]:
    """Builds each RaggedFeature's tensor from the parsed value and partition SparseTensors and
    drops the helper keys that were not requested."""
    built = {}
    for key, spec in ragged.items():
        values = parsed[spec.value_key or key]
        result = _partitioned(values.values, spec, parsed)
        if not single:
            outer = parsed[spec.partitions[0].key] if spec.partitions else values
            rowids = cast_ops.cast(outer.indices[:, 0], spec.row_splits_dtype)
            nrows = cast_ops.cast(outer.dense_shape[0], spec.row_splits_dtype)
            result = RaggedTensor.from_value_rowids(result, rowids, nrows, validate=spec.validate)
        built[key] = result
    parsed = {**parsed, **built}
    return {k: v for k, v in parsed.items() if k in requested}
