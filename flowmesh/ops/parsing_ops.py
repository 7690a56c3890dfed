"""Parsing ``tf.train.Example`` / ``SequenceExample`` protos in the graph.

=============================  =============================================================
``ParseExample``               a batch (or, ``single=True``, one) of serialized Examples ->
                               sparse (indices, values, shapes) then dense outputs
``ParseSingleSequenceExample`` one SequenceExample -> context and feature-list outputs
=============================  =============================================================

Feature specs (``FixedLenFeature``, ``VarLenFeature``, ``FixedLenSequenceFeature``) are
sorted by key, as TensorFlow does, and stored as attrs; defaults are NumPy attrs. The
kernel (``kernels/parsing_ops.py``) parses a whole batch with one protobuf call. A spec
that does not match the data raises ``InvalidArgumentError`` naming the feature, the
example index and the expected and found type or size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops import ragged_feature_parsing as ragged_parsing
from flowmesh.ops._builders import make_op
from flowmesh.ops.parsing_config import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from flowmesh.ops.sparse_feature_parsing import construct, expand

_ALLOWED = (dtypes.float32, dtypes.int64, dtypes.string)


def _sparse_specs(n: int, rank: int, types: Sequence[Any]) -> list:
    return ([(dtypes.int64, TensorShape([None, rank]))] * n
            + [(dtypes.as_dtype(t), TensorShape([None])) for t in types]
            + [(dtypes.int64, TensorShape([rank]))] * n)


def _dense_specs(attrs: dict[str, Any], prefix: str, lead: list[Any]) -> list:
    out = []
    for t, shape, seq in zip(attrs[f"{prefix}types"], attrs[f"{prefix}shapes"],
                             attrs[f"{prefix}sequence"]):
        dims = lead + ([None] if seq else []) + list(shape)
        out.append((dtypes.as_dtype(t), TensorShape(dims)))
    return out


def _parse_example_shape(inputs: Sequence[Any], attrs: dict[str, Any]) -> list:
    single = attrs["single"]
    lead = [] if single else [inputs[0].shape[0] if inputs[0].shape.rank == 1 else None]
    sparse = _sparse_specs(len(attrs["sparse_keys"]), 1 if single else 2, attrs["sparse_types"])
    return sparse + _dense_specs(attrs, "dense_", lead)


def _parse_sequence_shape(inputs: Sequence[Any], attrs: dict[str, Any]) -> list:
    context = _sparse_specs(len(attrs["context_sparse_keys"]), 1, attrs["context_sparse_types"])
    context += _dense_specs(attrs, "context_dense_", [])
    sequence = _sparse_specs(len(attrs["feature_list_sparse_keys"]), 2,
                             attrs["feature_list_sparse_types"])
    sequence += _dense_specs(attrs, "feature_list_dense_", [None])
    return context + sequence


register_op("ParseExample", _parse_example_shape, not_differentiable=True)
register_op("ParseSingleSequenceExample", _parse_sequence_shape, not_differentiable=True)


# --- feature specs -> attrs ---------------------------------------------------------------------
def _check_dtype(key: str, dtype: dtypes.DType) -> None:
    if dtype not in _ALLOWED:
        raise ValueError(f"Feature '{key}': dtype {dtype.name} is not supported; use float32, "
                         "int64 or string")


def _default(key: str, spec: Any, shape: tuple[int, ...]) -> Any:
    value = spec.default_value
    if value is None:
        return None
    array = np.asarray(value, dtype=object if spec.dtype == dtypes.string else
                       spec.dtype.as_numpy_dtype)
    if isinstance(spec, FixedLenFeature):
        try:
            array = np.broadcast_to(array, shape).copy()
        except ValueError:
            raise ValueError(f"Feature '{key}': default_value of shape {list(array.shape)} does "
                             f"not fit the feature's shape {list(shape)}") from None
    if array.dtype == object:
        array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s,
                             otypes=[object])(array)
    return array


def _specs_to_attrs(features: Mapping[str, Any], prefix: str, sequence_ok: bool,
                    in_list: bool = False) -> dict[str, Any]:
    dense: dict[str, list] = {"keys": [], "types": [], "shapes": [], "defaults": [],
                              "sequence": []}
    sparse: dict[str, list] = {"keys": [], "types": []}
    for key in sorted(features):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            _check_dtype(key, spec.dtype)
            sparse["keys"].append(key)
            sparse["types"].append(spec.dtype)
            continue
        if not isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Feature '{key}': unsupported spec {spec!r} (use FixedLenFeature, "
                             "VarLenFeature or FixedLenSequenceFeature)")
        _check_dtype(key, spec.dtype)
        shape = tuple(int(d) for d in spec.shape)
        is_seq = isinstance(spec, FixedLenSequenceFeature)
        if is_seq and not sequence_ok:
            raise ValueError(f"Feature '{key}': FixedLenSequenceFeature is only allowed in "
                             "sequence_features here")
        if is_seq and not in_list and not spec.allow_missing:
            raise ValueError(f"Feature '{key}': FixedLenSequenceFeature in parse_example needs "
                             "allow_missing=True")
        dense["keys"].append(key)
        dense["types"].append(spec.dtype)
        dense["shapes"].append(list(shape))
        dense["defaults"].append(_default(key, spec, shape))
        dense["sequence"].append(is_seq and not in_list)
    attrs = {f"{prefix}dense_{k}": v for k, v in dense.items()}
    attrs.update({f"{prefix}sparse_{k}": v for k, v in sparse.items()})
    if in_list:
        attrs[f"{prefix}dense_allow_missing"] = [bool(getattr(features[k], "allow_missing", False))
                                                 for k in dense["keys"]]
    return attrs


def _unpack(outputs: Sequence[Any], attrs: dict[str, Any], prefix: str) -> tuple[dict, list]:
    sparse_keys = attrs[f"{prefix}sparse_keys"]
    n = len(sparse_keys)
    result: dict[str, Any] = {}
    for i, key in enumerate(sparse_keys):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    rest = list(outputs[3 * n:])
    for key in attrs[f"{prefix}dense_keys"]:
        result[key] = rest.pop(0)
    return result, rest


# --- public wrappers ---------------------------------------------------------------------------
def parse_example(serialized: Any, features: Mapping[str, Any], name: str | None = None,
                  example_names: Any = None) -> dict[str, Any]:
    """Parses a vector of serialized Examples into a dict of dense tensors ``[batch, ...]``
    and ``SparseTensor``s (``tf.io.parse_example``).

    Raises:
        ValueError: a spec is malformed (no features, bad dtype, bad default).
    """
    return _parse(serialized, features, single=False, name=name or "ParseExample")


def parse_single_example(serialized: Any, features: Mapping[str, Any], name: str | None = None,
                         example_names: Any = None) -> dict[str, Any]:
    """Parses one serialized Example (a scalar string) into a dict of tensors
    (``tf.io.parse_single_example``)."""
    return _parse(serialized, features, single=True, name=name or "ParseSingleExample")


def _parse(serialized: Any, features: Mapping[str, Any], single: bool, name: str) -> dict:
    if not features:
        raise ValueError("Missing: features was empty; pass a dict of feature specs")
    tensor = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    want = 0 if single else 1
    if tensor.shape.rank not in (None, want):
        raise ValueError(f"{name}: serialized must be a {'scalar' if single else 'vector'}, got "
                         f"shape {tensor.shape}")

    plain, ragged = ragged_parsing.expand(features, single)
    plain, sparse = expand(plain)
    attrs = _specs_to_attrs(plain, "", sequence_ok=True)
    attrs["single"] = single
    op = make_op("ParseExample", [tensor], attrs, name=name)
    result, _ = _unpack(op.outputs, attrs, "")
    if sparse:
        result = construct(result, sparse, {**features, **plain} if ragged else features)
    return ragged_parsing.construct(result, ragged, features, single) if ragged else result


def parse_single_sequence_example(serialized: Any, context_features: Mapping[str, Any] | None = None,
                                  sequence_features: Mapping[str, Any] | None = None,
                                  example_name: Any = None, name: str | None = None) -> tuple[dict, dict]:
    """Parses one serialized SequenceExample into ``(context, sequences)`` dicts
    (``tf.io.parse_single_sequence_example``): context features as in
    ``parse_single_example``; ``FixedLenSequenceFeature`` feature lists as ``[time, ...]``
    tensors, ``VarLenFeature`` ones as ``SparseTensor``s ``[time, max_len]``."""
    context_features, sequence_features = context_features or {}, sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features: pass context_features and/or sequence_features")
    tensor = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    attrs = _specs_to_attrs(context_features, "context_", sequence_ok=False)
    attrs.update(_specs_to_attrs(sequence_features, "feature_list_", sequence_ok=True, in_list=True))
    for key, spec in sequence_features.items():
        if isinstance(spec, FixedLenFeature):
            raise ValueError(f"Feature list '{key}': use FixedLenSequenceFeature (or "
                             "VarLenFeature) in sequence_features, not FixedLenFeature")
    op = make_op("ParseSingleSequenceExample", [tensor], attrs,
                 name=name or "ParseSingleSequenceExample")
    context, rest = _unpack(op.outputs, attrs, "context_")
    sequences, _ = _unpack(rest, attrs, "feature_list_")
    return context, sequences
