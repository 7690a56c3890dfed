"""Kernels of the mutable lookup tables (``ops/mutable_lookup_ops.py``).

A :class:`MutableTableState` lives in the resource store of its device like the static
tables (``kernels/lookup_ops.py``, whose ``LookupTableFindV2`` / ``LookupTableSizeV2`` /
``LookupTableImportV2`` kernels serve it too). It starts empty and needs no initializer.
Values may be tensors of a fixed ``value_shape`` (one row per key). A dense table refuses
its ``empty_key`` and ``deleted_key`` as keys, as TensorFlow's ``MutableDenseHashTable``,
and exports its buckets: the entries, then ``empty_key`` (with zero values) in the unused
buckets of its capacity, which starts at ``initial_num_buckets`` and doubles whenever the
table would pass ``max_load_factor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.shapes import as_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.lookup_ops import TableState, as_runtime, python_values, table_of


class MutableTableState(TableState):
    """A table whose entries change with insert / remove (``key -> value row``)."""

    def __init__(self, name: str, key_dtype: Any, value_dtype: Any, value_shape: tuple[int, ...] = (),
                 dense: tuple[Any, Any, int, float] | None = None):
        super().__init__(name, key_dtype, value_dtype)
        self.entries = {}
        self.value_shape = value_shape
        self.dense = dense  # (empty_key, deleted_key, capacity, max_load_factor)

    def fill(self, entries: dict[Any, Any]) -> None:
        """``LookupTableImportV2``: replaces the contents."""
        with self.lock:
            self.entries = dict(entries)

    def _rows(self, values: Any, count: int, op: str) -> list[Any]:
        flat = python_values(values)
        width = int(np.prod(self.value_shape)) if self.value_shape else 1
        if len(flat) != count * width:
            raise InvalidArgumentError(f"{op} on table '{self.name}': expected {count} values of shape "
                                       f"{list(self.value_shape)}, got a tensor of shape "
                                       f"{list(getattr(values, 'shape', ()))}")
        if not self.value_shape:
            return flat
        return [tuple(flat[i * width:(i + 1) * width]) for i in range(count)]

    def _check_keys(self, keys: list[Any], op: str) -> None:
        if self.dense is None:
            return
        empty, deleted = self.dense[0], self.dense[1]
        for key in keys:
            if key == empty:
                raise InvalidArgumentError(f"{op} on table '{self.name}': Using the empty_key as a table key "
                                           "is not allowed")
            if key == deleted:
                raise InvalidArgumentError(f"{op} on table '{self.name}': Using the deleted_key as a table key "
                                           "is not allowed")

    def insert(self, keys: Any, values: Any) -> None:
        flat_keys = python_values(keys)
        self._check_keys(flat_keys, "LookupTableInsertV2")
        rows = self._rows(values, len(flat_keys), "LookupTableInsertV2")
        with self.lock:
            self.entries.update(zip(flat_keys, rows))
            if self.dense is not None:
                empty, deleted, capacity, load = self.dense
                while len(self.entries) > load * capacity:
                    capacity *= 2
                self.dense = (empty, deleted, capacity, load)

    def remove(self, keys: Any) -> None:
        flat_keys = python_values(keys)
        self._check_keys(flat_keys, "LookupTableRemoveV2")
        with self.lock:
            for key in flat_keys:
                self.entries.pop(key, None)

    def lookup(self, keys: Any, default: Any, out_dtype: Any) -> Any:
        flat_keys = python_values(keys)
        self._check_keys(flat_keys, "LookupTableFindV2")
        shape = tuple(getattr(keys, "shape", ()))
        fallback = self._rows(default, 1, "LookupTableFindV2 (default_value)")[0]
        with self.lock:
            found = [self.entries.get(k, fallback) for k in flat_keys]
        return self._values(found, out_dtype, shape)

    def _values(self, rows: list[Any], out_dtype: Any, lead: tuple[int, ...]) -> Any:
        flat = [v for row in rows for v in row] if self.value_shape else rows
        return as_runtime(flat, out_dtype, (*lead, *self.value_shape))

    def export(self) -> tuple[Any, Any]:
        with self.lock:
            keys, rows = list(self.entries), list(self.entries.values())
        if self.dense is not None:
            padding = self.dense[2] - len(keys)
            keys += [self.dense[0]] * padding
            zero = b"" if self.value_dtype == dtypes.string else 0
            rows += [tuple([zero] * int(np.prod(self.value_shape))) if self.value_shape else zero] * padding
        return (as_runtime(keys, self.key_dtype, (len(keys),)),
                self._values(rows, self.value_dtype, (len(rows),)))


def _mutable(ctx: KernelContext, dense: tuple[Any, Any, int, float] | None = None) -> MutableTableState:
    name = ctx.attr("shared_name") or ctx.op.name
    shape = tuple(as_shape(ctx.attr("value_shape", [])).as_list())
    return ctx.device.resources.lookup_or_create(
        ctx.attr("container", "") or "", name,
        lambda: MutableTableState(name, ctx.attr("key_dtype"), ctx.attr("value_dtype"), shape, dense))


@kernel("MutableHashTableV2")
def _mutable_hash_table(ctx: KernelContext):
    state = _mutable(ctx)
    return lambda: state


kernel("MutableHashTableOfTensorsV2")(_mutable_hash_table)


@kernel("MutableDenseHashTableV2")
def _dense_hash_table(ctx: KernelContext):
    capacity, load = int(ctx.attr("initial_num_buckets", 131072)), float(ctx.attr("max_load_factor", 0.8))
    made: list[MutableTableState] = []

    def table(empty_key: Any, deleted_key: Any) -> MutableTableState:
        if not made:
            empty, deleted = python_values(empty_key)[0], python_values(deleted_key)[0]
            if empty == deleted:
                raise InvalidArgumentError(f"MutableDenseHashTableV2 '{ctx.op.name}': empty_key and deleted_key "
                                           "cannot be the same")
            made.append(_mutable(ctx, (empty, deleted, capacity, load)))
        return made[0]

    return table


def _mutable_of(handle: Any, op_type: str) -> MutableTableState:
    table = table_of(handle, op_type)
    if not isinstance(table, MutableTableState):
        raise InvalidArgumentError(f"{op_type}: table '{table.name}' is a static table (read-only); use "
                                   "tf.lookup.experimental.MutableHashTable or DenseHashTable to change entries")
    return table


@kernel("LookupTableInsertV2")
def _insert(ctx: KernelContext):
    return lambda handle, keys, values: _mutable_of(handle, "LookupTableInsertV2").insert(keys, values)


@kernel("LookupTableRemoveV2")
def _remove(ctx: KernelContext):
    return lambda handle, keys: _mutable_of(handle, "LookupTableRemoveV2").remove(keys)


@kernel("LookupTableExportV2")
def _export(ctx: KernelContext):
    return lambda handle: _mutable_of(handle, "LookupTableExportV2").export()
