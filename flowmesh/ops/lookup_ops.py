"""Lookup tables: ``tf.tables_initializer`` and TensorFlow's hash-table ops.

flowmesh's feature columns look vocabularies up without table resources, so the
``TABLE_INITIALIZERS`` collection is usually empty and ``tables_initializer`` is a ``no_op``;
programs written for TensorFlow call it (and ``Scaffold`` runs it) all the same.

The table ops are those TensorFlow puts in graphs it exports (a SavedModel of an Estimator
with a vocabulary, ``tf.lookup.StaticHashTable``), so that flowmesh imports and runs them:

=================================  =====================================================
``HashTableV2``                    the table handle (attrs ``key_dtype``, ``value_dtype``)
``LookupTableImportV2``            fills it from ``keys`` and ``values`` tensors
``InitializeTableV2``              the same (TensorFlow 1.x's name)
``InitializeTableFromTextFileV2``  fills it from a text file (``key_index``/``value_index``:
                                   a column, -1 the line number, -2 the whole line)
``LookupTableFindV2``              ``keys`` -> values (``default_value`` when missing)
``LookupTableSizeV2``              the number of entries (int64)
=================================  =====================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import GraphKeys, Operation, Tensor, get_collection
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import control_flow_ops


def _check_keys(op_type: str, keys: Tensor, attrs: dict[str, Any], attr: str = "Tin") -> None:
    want = attrs.get(attr)
    if want is not None and keys.dtype != want:
        raise TypeError(f"{op_type}: keys must be {want.name}, got {keys.dtype.name}")


def _find_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _, keys, default = inputs
    _check_keys("LookupTableFindV2", keys, attrs)
    # the values' shape is the default's (scalar for the static tables, whose kernel checks it)
    return [(attrs.get("Tout") or default.dtype, keys.shape.concatenate(default.shape))]


def _import_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _, keys, values = inputs
    if not keys.shape.is_compatible_with(values.shape):
        raise ValueError(f"table initializer: keys {keys.shape} and values {values.shape} differ in "
                         "shape; flowmesh's tables hold scalar values")
    return []


register_op("HashTableV2", lambda inputs, attrs: [(dtypes.resource, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("LookupTableImportV2", _import_shape, not_differentiable=True, stateful=True)
register_op("InitializeTableV2", _import_shape, not_differentiable=True, stateful=True)
register_op("InitializeTableFromTextFileV2", lambda inputs, attrs: [], not_differentiable=True, stateful=True)
register_op("LookupTableFindV2", _find_shape, not_differentiable=True, stateful=True)
register_op("LookupTableSizeV2", lambda inputs, attrs: [(dtypes.int64, TensorShape([]))],
            not_differentiable=True, stateful=True)


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """Groups the ops in ``GraphKeys.TABLE_INITIALIZERS`` (a ``no_op`` when there are none)."""
    initializers = get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return control_flow_ops.no_op(name=name)
