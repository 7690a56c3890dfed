"""Kernels of the hash-table ops in ``flowmesh/ops/lookup_ops.py``.

A :class:`TableState` lives in the resource store of the table's device (shared by every
session of that server, as TensorFlow's tables). Keys are Python values (``bytes`` for
strings, ``int`` for integers); initializing a table twice with the same entries is a no-op
and with different ones an error, as TensorFlow's ``HashTable``.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from flowmesh.kernels.contract.registry import KernelContext, kernel


class TableState:
    """One hash table: ``key -> value`` with fixed dtypes."""

    def __init__(self, name: str, key_dtype: Any, value_dtype: Any):
        self.name = name
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.entries: dict[Any, Any] | None = None
        self.lock = threading.Lock()

    def fill(self, entries: dict[Any, Any]) -> None:
        with self.lock:
            if self.entries is not None and self.entries != entries:
                raise FailedPreconditionError(None, None, f"Table '{self.name}' is already initialized "
                                              "with other entries")
            self.entries = entries

    def find(self, keys: list[Any], default: Any) -> list[Any]:
        if self.entries is None:
            raise FailedPreconditionError(None, None, f"Table '{self.name}' is not initialized; run "
                                          "tf.tables_initializer() (a SavedModel's main_op) first")
        get = self.entries.get
        return [get(k, default) for k in keys]

    def lookup(self, keys: Any, default: Any, out_dtype: Any) -> Any:
        """``LookupTableFindV2``: the values of the runtime tensor ``keys``, shaped as it.

        Raises:
            InvalidArgumentError: ``default`` is not a scalar (these tables hold scalars).
        """
        defaults = python_values(default)
        if len(defaults) != 1 or _shape(default):
            raise InvalidArgumentError(f"Table '{self.name}' holds scalar values: default_value must be a "
                                       f"scalar, got shape {list(_shape(default))}")
        return as_runtime(self.find(python_values(keys), defaults[0]), out_dtype, _shape(keys))


def python_values(value: Any) -> list[Any]:
    """A runtime tensor's elements as hashable Python values (bytes or numbers)."""
    if isinstance(value, torch.Tensor):
        return value.reshape(-1).tolist()
    array = np.asarray(value, dtype=object if np.asarray(value).dtype == object else None).reshape(-1)
    return [v.encode() if isinstance(v, str) else (v.item() if hasattr(v, "item") else v) for v in array]


def as_runtime(values: list[Any], dtype: Any, shape: tuple[int, ...]) -> Any:
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    from flowmesh.kernels.contract.convert import torch_dtype

    return torch.tensor(values, dtype=torch_dtype(dtype)).reshape(shape)


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(value.shape) if hasattr(value, "shape") else ()


def table_of(value: Any, op_type: str) -> TableState:
    if not isinstance(value, TableState):
        raise InvalidArgumentError(f"{op_type} expects a table handle, got {type(value).__name__}")
    return value


@kernel("HashTableV2")
def _hash_table(ctx: KernelContext):
    name = ctx.attr("shared_name") or ctx.op.name
    state = ctx.device.resources.lookup_or_create(
        ctx.attr("container", "") or "", name,
        lambda: TableState(name, ctx.attr("key_dtype"), ctx.attr("value_dtype")))
    return lambda: state


def _import(op_type: str):
    def make(ctx: KernelContext):
        def fill(handle: Any, keys: Any, values: Any) -> None:
            table = table_of(handle, op_type)
            table.fill(dict(zip(python_values(keys), python_values(values))))
        return fill
    return make


kernel("LookupTableImportV2")(_import("LookupTableImportV2"))
kernel("InitializeTableV2")(_import("InitializeTableV2"))


@kernel("LookupTableFindV2")
def _find(ctx: KernelContext):
    out_dtype = ctx.output_dtypes[0]

    def find(handle: Any, keys: Any, default: Any) -> Any:
        return table_of(handle, "LookupTableFindV2").lookup(keys, default, out_dtype)

    return find


@kernel("LookupTableSizeV2")
def _size(ctx: KernelContext):
    def size(handle: Any) -> Any:
        table = table_of(handle, "LookupTableSizeV2")
        return torch.tensor(len(table.entries or {}), dtype=torch.int64)

    return size


def _column(line: bytes, number: int, index: int, delimiter: bytes, dtype: Any, where: str) -> Any:
    if index == -1:
        return number
    text = line if index == -2 else _split(line, delimiter, index, where)
    if dtype == dtypes.string:
        return text
    try:
        return int(text) if dtype.is_integer else float(text)
    except ValueError:
        raise InvalidArgumentError(f"{where}: {text!r} is not a {dtype.name}") from None


def _split(line: bytes, delimiter: bytes, index: int, where: str) -> bytes:
    parts = line.split(delimiter)
    if index >= len(parts):
        raise InvalidArgumentError(f"{where}: column {index} is missing (the line has {len(parts)})")
    return parts[index]


@kernel("InitializeTableFromTextFileV2")
def _from_text_file(ctx: KernelContext):
    key_index, value_index = int(ctx.attr("key_index")), int(ctx.attr("value_index"))
    delimiter = (ctx.attr("delimiter") or "\t").encode()
    vocab_size = int(ctx.attr("vocab_size", -1))
    offset = int(ctx.attr("offset", 0) or 0)

    def fill(handle: Any, filename: Any) -> None:
        from flowmesh.kernels.io_ops import scalar_string

        table = table_of(handle, "InitializeTableFromTextFileV2")
        path = scalar_string(filename)
        try:
            with open(path, "rb") as f:
                lines = f.read().splitlines()
        except OSError as exc:
            raise NotFoundError(None, None, f"InitializeTableFromTextFileV2 '{ctx.op.name}': cannot read "
                                f"{path}: {exc.strerror}") from None
        if vocab_size >= 0:
            if len(lines) < vocab_size:
                raise InvalidArgumentError(f"Invalid vocab_size in {path}: expected {vocab_size} lines, "
                                           f"found {len(lines)}")
            lines = lines[:vocab_size]
        entries = {}
        for number, line in enumerate(lines):
            where = f"{path} line {number + 1}"
            key = _column(line, number + offset, key_index, delimiter, table.key_dtype, where)
            entries[key] = _column(line, number + offset, value_index, delimiter, table.value_dtype, where)
        table.fill(entries)

    return fill
