"""The ops of mutable lookup tables (``tf.lookup.experimental.MutableHashTable`` and
``DenseHashTable``), TensorFlow's op types and attrs:

================================  ======================================================
``MutableHashTableV2``            a table of scalar values (``key_dtype``, ``value_dtype``)
``MutableHashTableOfTensorsV2``   the same with values of ``value_shape``
``MutableDenseHashTableV2``       open addressing, with ``empty_key`` / ``deleted_key``
                                  inputs that may not be used as keys
``LookupTableInsertV2``           ``keys`` -> ``values`` (added or replaced)
``LookupTableRemoveV2``           drops ``keys`` (missing ones are ignored)
``LookupTableExportV2``           every ``(keys, values)`` of the table
================================  ======================================================

``LookupTableFindV2`` and ``LookupTableSizeV2`` (``ops/lookup_ops.py``) read them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape


def _handle(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.resource, TensorShape([]))]


def _check(op_type: str, tensor: Tensor, want: Any, what: str) -> None:
    if want is not None and tensor.dtype != want:
        raise TypeError(f"{op_type}: {what} must be {dtypes.as_dtype(want).name}, got {tensor.dtype.name} "
                        f"({tensor.name}); cast them or create the table with that dtype")


def _insert_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _, keys, values = inputs
    _check("LookupTableInsertV2", keys, attrs.get("Tin"), "keys")
    _check("LookupTableInsertV2", values, attrs.get("Tout"), "values")
    return []


def _remove_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _check("LookupTableRemoveV2", inputs[1], attrs.get("Tin"), "keys")
    return []


def _export_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    value_shape = attrs.get("value_shape")
    values = unknown_shape() if value_shape is None else TensorShape([None]).concatenate(as_shape(value_shape))
    return [(attrs["Tkeys"], TensorShape([None])), (attrs["Tvalues"], values)]


for _op in ("MutableHashTableV2", "MutableHashTableOfTensorsV2", "MutableDenseHashTableV2"):
    register_op(_op, _handle, not_differentiable=True, stateful=True)
register_op("LookupTableInsertV2", _insert_shape, not_differentiable=True, stateful=True)
register_op("LookupTableRemoveV2", _remove_shape, not_differentiable=True, stateful=True)
register_op("LookupTableExportV2", _export_shape, not_differentiable=True, stateful=True)
