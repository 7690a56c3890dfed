"""``tf.lookup.experimental.MutableHashTable`` and ``DenseHashTable``: tables whose entries
graph ops change (``insert``, ``remove``), on TensorFlow's ops
(``ops/mutable_lookup_ops.py``). They start empty: no initializer to run.

Where flowmesh differs: the tables are not saved by ``tf.train.Saver`` (flowmesh's static
tables are not either); ``export()`` gives their contents to save by other means.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, name_scope
from flowmesh.lookup.table_base import LookupTable
from flowmesh.ops._builders import make_op, make_tensor


class MutableHashTable(LookupTable):
    """A hash table of ``key_dtype`` keys to ``value_dtype`` values, which may be tensors:
    their shape is ``default_value``'s.

    Args:
        key_dtype: the keys' dtype.
        value_dtype: the values' dtype.
        default_value: what ``lookup`` returns for a missing key (its shape is the values').
        name: the table op's name.
        checkpoint: accepted for compatibility (see the module docstring).
        experimental_is_anonymous: ``True``: a table private to this op (no sharing by name).
    """

    _op_name = "MutableHashTable"

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, name: str = "MutableHashTable",
                 checkpoint: bool = True, experimental_is_anonymous: bool = False):
        super().__init__(key_dtype, value_dtype)
        self._name = name
        with name_scope(name, self._op_name):
            self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype, name="default_value")
        self._value_shape = self._default_value.shape
        self._handle = self._create(name or self._op_name, experimental_is_anonymous)

    def _attrs(self, anonymous: bool) -> dict[str, Any]:
        return {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype, "container": "",
                "shared_name": "", "use_node_name_sharing": not anonymous}

    def _create(self, op_name: str, anonymous: bool) -> Tensor:
        attrs = self._attrs(anonymous)
        if self._value_shape.rank == 0:
            return make_tensor("MutableHashTableV2", [], attrs, name=op_name)
        attrs["value_shape"] = self._value_shape
        return make_tensor("MutableHashTableOfTensorsV2", [], attrs, name=op_name)

    def _keys(self, keys: Any) -> Tensor:
        keys = convert_to_tensor(keys, dtype_hint=self._key_dtype, name="keys")
        if keys.dtype != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got {keys.dtype.name}.")
        return keys

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64)."""
        with name_scope(name, f"{self._name}_Size"):
            return make_tensor("LookupTableSizeV2", [self._handle], name="Size")

    def lookup(self, keys: Any, dynamic_default_values: Any = None, name: str | None = None) -> Tensor:
        """The values of ``keys``: shape ``keys.shape + value_shape``; missing keys give
        ``dynamic_default_values`` when given (of the values' shape), else ``default_value``.

        Raises:
            TypeError: ``keys`` of another dtype than the table's keys.
        """
        with name_scope(name, f"{self._name}_lookup_table_find"):
            keys = self._keys(keys)
            default = self._default_value if dynamic_default_values is None else convert_to_tensor(
                dynamic_default_values, dtype=self._value_dtype, name="default_value")
            return make_tensor("LookupTableFindV2", [self._handle, keys, default],
                               {"Tin": self._key_dtype, "Tout": self._value_dtype}, name="Find")

    def insert(self, keys: Any, values: Any, name: str | None = None) -> Operation:
        """An op that maps each of ``keys`` to its row of ``values`` (shape ``keys.shape +
        value_shape``), replacing existing entries.

        Raises:
            TypeError: ``keys`` or ``values`` of the wrong dtype.
        """
        with name_scope(name, f"{self._name}_lookup_table_insert"):
            keys = self._keys(keys)
            values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
            return make_op("LookupTableInsertV2", [self._handle, keys, values],
                           {"Tin": self._key_dtype, "Tout": self._value_dtype}, name="Insert")

    def remove(self, keys: Any, name: str | None = None) -> Operation:
        """An op that drops ``keys`` from the table (missing keys are ignored).

        Raises:
            TypeError: ``keys`` of the wrong dtype.
        """
        with name_scope(name, f"{self._name}_lookup_table_remove"):
            return make_op("LookupTableRemoveV2", [self._handle, self._keys(keys)], {"Tin": self._key_dtype},
                           name="Remove")

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """Every entry: ``(keys, values)``, a vector of keys and their values' rows."""
        with name_scope(name, f"{self._name}_lookup_table_export_values"):
            op = make_op("LookupTableExportV2", [self._handle],
                         {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype, "value_shape": self._value_shape},
                         name="Export")
            return op.outputs[0], op.outputs[1]


class DenseHashTable(MutableHashTable):
    """A mutable table with open addressing (TensorFlow's ``MutableDenseHashTable``): two key
    values, ``empty_key`` and ``deleted_key``, mark free buckets and may never be inserted or
    looked up; ``export`` returns every bucket (free ones hold ``empty_key``).

    Args:
        key_dtype, value_dtype, default_value, name, checkpoint,
        experimental_is_anonymous: as :class:`MutableHashTable`.
        empty_key: a key value never used (scalar of ``key_dtype``).
        deleted_key: another one, different from ``empty_key``.
        initial_num_buckets: the starting capacity (a power of 2; TensorFlow's 131072 when
            ``None``).
    """

    _op_name = "MutableDenseHashTable"

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, empty_key: Any, deleted_key: Any,
                 initial_num_buckets: int | None = None, name: str = "MutableDenseHashTable",
                 checkpoint: bool = True, experimental_is_anonymous: bool = False):
        if initial_num_buckets is not None and (initial_num_buckets < 1 or
                                                initial_num_buckets & (initial_num_buckets - 1)):
            raise ValueError(f"initial_num_buckets must be a power of 2, got {initial_num_buckets}")
        self._buckets = 131072 if initial_num_buckets is None else int(initial_num_buckets)
        self._empty_key, self._deleted_key = empty_key, deleted_key
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint, experimental_is_anonymous)

    def _create(self, op_name: str, anonymous: bool) -> Tensor:
        empty = convert_to_tensor(self._empty_key, dtype=self._key_dtype, name="empty_key")
        deleted = convert_to_tensor(self._deleted_key, dtype=self._key_dtype, name="deleted_key")
        attrs = self._attrs(anonymous)
        attrs.update({"value_shape": self._value_shape, "initial_num_buckets": self._buckets,
                      "max_load_factor": 0.8})
        return make_tensor("MutableDenseHashTableV2", [empty, deleted], attrs, name=op_name)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:  # type: ignore[override]
        """The values of ``keys`` (``default_value`` for missing ones); looking up
        ``empty_key`` or ``deleted_key`` raises ``InvalidArgumentError`` when run."""
        return super().lookup(keys, name=name)

    def insert_or_assign(self, keys: Any, values: Any, name: str | None = None) -> Operation:
        """The same as :meth:`insert`."""
        return self.insert(keys, values, name)

    def erase(self, keys: Any, name: str | None = None) -> Operation:
        """The same as :meth:`remove`."""
        return self.remove(keys, name)
