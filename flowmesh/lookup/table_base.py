"""What every lookup table and every table initializer share, as TensorFlow's
``LookupInterface`` and ``TableInitializerBase`` do: the key and value dtypes; a table
also has its resource handle, name, default value and ``table[keys]``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor


class KeyValueDtypes:
    """The dtypes of a table's keys and values (of a table, or of what fills one).

    Args:
        key_dtype: the keys' dtype.
        value_dtype: the values' dtype.
    """

    def __init__(self, key_dtype: Any, value_dtype: Any):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self) -> dtypes.DType:
        """The keys' dtype."""
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        """The values' dtype."""
        return self._value_dtype


class LookupTable(KeyValueDtypes):
    """A table on a resource handle: subclasses set ``_handle``, ``_name`` and
    ``_default_value`` and define ``lookup``."""

    _handle: Tensor
    _name: str
    _default_value: Tensor
    lookup: Callable[..., Tensor]  # the values of keys; each table defines it

    @property
    def resource_handle(self) -> Tensor:
        """The table's resource (the output of its table op)."""
        return self._handle

    @property
    def name(self) -> str:
        """The table's name."""
        return self._name

    @property
    def default_value(self) -> Tensor:
        """What ``lookup`` returns for a missing key."""
        return self._default_value

    def __getitem__(self, keys: Any) -> Tensor:
        return self.lookup(keys)
