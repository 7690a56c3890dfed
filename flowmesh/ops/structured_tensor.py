"""``tf.experimental.StructuredTensor``: a tensor of records, each with the same named fields.

A StructuredTensor of shape ``S`` holds fields whose values (Tensors, RaggedTensors or
StructuredTensors) all have ``S`` as their leading dimensions, as TensorFlow's. This is the
graph-side subset: :meth:`StructuredTensor.from_fields`, :meth:`StructuredTensor.from_pyval`
(dicts and lists of dicts; a list-valued field of a list of records becomes a RaggedTensor, as
in TensorFlow), ``field_names``, ``field_value`` and ``st[name]`` (a name or a path tuple).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import array_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.ragged_factory_ops import constant as ragged_constant
from flowmesh.ops.ragged_tensor import RaggedTensor


class StructuredTensor:
    """Records of named fields (``tf.experimental.StructuredTensor``); build with
    :meth:`from_fields` or :meth:`from_pyval`."""

    def __init__(self, fields: Mapping[str, Any], shape: TensorShape):
        self._fields = dict(fields)
        self._shape = shape

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any], shape: Any = (), nrows: Any = None,
                    row_partitions: Any = None, validate: bool = False) -> StructuredTensor:
        """A StructuredTensor of ``shape`` with ``fields`` (name -> value whose leading
        dimensions are ``shape``).

        Raises:
            ValueError: the rank of ``shape`` is unknown, or a field's leading dimensions are
                not compatible with ``shape``.
            TypeError: a field name is not a string.
        """
        shape = as_shape(shape)
        if shape.rank is None:
            raise ValueError("StructuredTensor's shape must have known rank.")
        values = {}
        for name, value in fields.items():
            if not isinstance(name, str):
                raise TypeError(f"Unexpected type for key in `fields`: {name!r}")
            if not isinstance(value, (Tensor, RaggedTensor, StructuredTensor)):
                value = convert_to_tensor(value)
            lead = value.shape[:shape.rank] if value.shape.rank is not None else TensorShape([None] * shape.rank)
            if value.shape.rank is not None and value.shape.rank < shape.rank:
                raise ValueError(f"Field '{name}' of shape {value.shape} has fewer dimensions than the "
                                 f"StructuredTensor's shape {shape}")
            if not lead.is_compatible_with(shape):
                raise ValueError(f"Shapes {shape} and {lead} are not compatible (field '{name}')")
            shape = shape.merge_with(lead)
            values[name] = value
        if isinstance(nrows, int) and shape.rank and shape[0] is None:
            shape = TensorShape([nrows]).concatenate(shape[1:])
        return cls(values, shape)

    @classmethod
    def from_pyval(cls, pyval: Any, typespec: Any = None) -> StructuredTensor:
        """A StructuredTensor from a dict (a scalar) or a list of dicts (a vector).

        Raises:
            KeyError: the dicts of a list have different keys.
            TypeError: ``pyval`` is neither.
        """
        if typespec is not None:
            raise NotImplementedError("StructuredTensor.from_pyval(typespec=...) is not implemented")
        if isinstance(pyval, Mapping):
            return cls.from_fields({k: _value(v) for k, v in pyval.items()}, shape=())
        if isinstance(pyval, (list, tuple)) and pyval and all(isinstance(r, Mapping) for r in pyval):
            keys = list(pyval[0])
            for record in pyval:
                for key in set(keys) ^ set(record):
                    raise KeyError(key)
            return cls.from_fields({k: _column([r[k] for r in pyval]) for k in keys}, shape=[len(pyval)])
        raise TypeError(f"StructuredTensor.from_pyval takes a dict or a list of dicts, got {pyval!r}")

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def rank(self) -> int:
        return self._shape.rank

    def nrows(self) -> Tensor:
        """The number of rows (int64 scalar; rank 0 has none).

        Raises:
            ValueError: a scalar StructuredTensor.
        """
        if self.rank == 0:
            raise ValueError("nrows() is not defined for a scalar StructuredTensor")
        rows = self._shape.as_list()[0]
        if rows is not None:
            return constant(rows, dtype=dtypes.int64)
        first = next(iter(self._fields.values()))
        return first.nrows() if not isinstance(first, Tensor) else array_ops.shape(first, out_type=dtypes.int64)[0]

    def field_names(self) -> tuple[str, ...]:
        return tuple(self._fields)

    def field_value(self, field_name: Any) -> Any:
        """The value of a field (a name, or a tuple path through nested StructuredTensors).

        Raises:
            KeyError: no such field.
        """
        if isinstance(field_name, (list, tuple)):
            value: Any = self
            for name in field_name:
                if not isinstance(value, StructuredTensor):
                    raise KeyError(f"Field path {tuple(field_name)!r} goes through a non-struct field")
                value = value.field_value(name)
            return value
        if field_name not in self._fields:
            raise KeyError(f"Field {field_name!r} not found in {self.field_names()}")
        return self._fields[field_name]

    def __getitem__(self, key: Any) -> Any:
        """``st["name"]`` or ``st[("a", "b")]``: a field (indexing rows is not implemented)."""
        if isinstance(key, str) or (isinstance(key, tuple) and key and all(isinstance(k, str) for k in key)):
            return self.field_value(key)
        raise NotImplementedError("StructuredTensor indexing takes field names only")

    def __repr__(self) -> str:
        fields = ", ".join(f'"{k}": {v!r}' for k, v in self._fields.items())
        return f"<StructuredTensor(fields={{{fields}}}, shape={self._shape})>"


def _value(value: Any) -> Any:
    """A field of a scalar record."""
    if isinstance(value, Mapping):
        return StructuredTensor.from_pyval(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(r, Mapping) for r in value):
        return StructuredTensor.from_pyval(list(value))
    return constant(value)


def _column(values: list[Any]) -> Any:
    """One field over the records of a list: scalars stack, lists become a RaggedTensor."""
    if all(isinstance(v, Mapping) for v in values):
        return StructuredTensor.from_pyval(list(values))
    if any(isinstance(v, (list, tuple)) for v in values):
        return ragged_constant(values)
    return constant(values)
