"""``tf.lookup``: static lookup tables on TensorFlow's hash-table ops
(:mod:`flowmesh.ops.lookup_ops`): ``StaticHashTable`` and ``StaticVocabularyTable``, filled
from tensors (``KeyValueTensorInitializer``) or a text file (``TextFileInitializer``) by an
op in ``GraphKeys.TABLE_INITIALIZERS`` (``tf.tables_initializer()`` runs it).

Where flowmesh differs: the static tables hold scalar values. The mutable tables
(``tf.lookup.experimental``) are in ``mutable_tables.py``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Operation, Tensor, add_to_collection, name_scope
from flowmesh.lookup import table_base
from flowmesh.ops._builders import make_op, make_tensor

_fill_namespace(globals(), "lookup")


class TextFileIndex:
    """Special column indices of :class:`TextFileInitializer`."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class KeyValueTensorInitializer(table_base.KeyValueDtypes):
    """Fills a table with ``keys[i] -> values[i]``."""

    def __init__(self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None,
                 name: str | None = None):
        with name_scope(name, "key_value_init"):
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        super().__init__(self._keys.dtype, self._values.dtype)
        self._name = name or "key_value_init"

    def initialize(self, table: Any) -> Operation:
        """The op filling ``table`` (added to ``TABLE_INITIALIZERS``)."""
        with name_scope(self._name):
            op = make_op("LookupTableImportV2", [table.resource_handle, self._keys, self._values],
                         {"Tin": self.key_dtype, "Tout": self.value_dtype}, name="table_init")
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class TextFileInitializer:
    """Fills a table from a text file: per line, the key from column ``key_index`` and the
    value from column ``value_index`` (split at ``delimiter``; ``TextFileIndex.LINE_NUMBER``
    is the line number, ``TextFileIndex.WHOLE_LINE`` the whole line).

    Raises:
        ValueError: a column index below -2, or a whole-line / line-number column of the
            wrong dtype (string / int64), as TensorFlow checks.
    """

    def __init__(self, filename: Any, key_dtype: Any, key_index: int, value_dtype: Any, value_index: int,
                 vocab_size: int | None = None, delimiter: str = "\t", name: str | None = None,
                 value_index_offset: int = 0):
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        for index, dtype, what in ((key_index, key_dtype, "key"), (value_index, value_dtype, "value")):
            if index < -2:
                raise ValueError(f"Invalid {what} index {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
                raise ValueError(f"Signature mismatch. {what.capitalize()}s must be dtype int64, got {dtype}.")
            if index == TextFileIndex.WHOLE_LINE and dtype != dtypes.string:
                raise ValueError(f"Signature mismatch. {what.capitalize()}s must be dtype string, got {dtype}.")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename = filename
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self._attrs = {"key_index": int(key_index), "value_index": int(value_index),
                       "vocab_size": -1 if vocab_size is None else int(vocab_size), "delimiter": delimiter,
                       "offset": int(value_index_offset)}
        self._name = name or "text_file_init"

    def initialize(self, table: Any) -> Operation:
        """The op filling ``table`` (added to ``TABLE_INITIALIZERS`` and ``ASSET_FILEPATHS``)."""
        with name_scope(self._name):
            filename = convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            op = make_op("InitializeTableFromTextFileV2", [table.resource_handle, filename], dict(self._attrs),
                         name="table_init")
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return op


class StaticHashTable(table_base.LookupTable):
    """A table initialized once and read-only afterwards; missing keys give
    ``default_value``."""

    def __init__(self, initializer: Any, default_value: Any, name: str | None = None,
                 experimental_is_anonymous: bool = False):
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._initializer = initializer
        self._name = name or "hash_table"
        with name_scope(name, "hash_table"):
            self._default_value = convert_to_tensor(default_value, dtype=initializer.value_dtype)
            self._handle = make_tensor("HashTableV2", [], {"key_dtype": initializer.key_dtype,
                                                           "value_dtype": initializer.value_dtype,
                                                           "shared_name": "", "container": ""},
                                       name="hash_table")
            self._init_op = initializer.initialize(self)

    @property
    def initializer(self) -> Operation:
        return self._init_op

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        """The values of ``keys`` (``default_value`` for missing ones), shaped as ``keys``.

        Raises:
            TypeError: ``keys`` of another dtype than the table's keys.
        """
        keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        with name_scope(name, f"{self._name}_Lookup"):
            return make_tensor("LookupTableFindV2", [self._handle, keys, self._default_value],
                               {"Tin": self.key_dtype, "Tout": self.value_dtype}, name="hash_table_Lookup")

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64)."""
        with name_scope(name, f"{self._name}_Size"):
            return make_tensor("LookupTableSizeV2", [self._handle], name="hash_table_Size")


class StaticVocabularyTable:
    """Ids of a vocabulary (the initializer maps words to int64 ids) and, for words out of
    it, ``vocab_size + fingerprint(word) % num_oov_buckets`` (TensorFlow's
    ``string_to_hash_bucket_fast``; integer keys are hashed as their decimal strings).

    Raises:
        ValueError: ``num_oov_buckets`` <= 0 or an initializer whose values are not int64.
    """

    def __init__(self, initializer: Any, num_oov_buckets: int, lookup_key_dtype: Any = None, name: str | None = None,
                 experimental_is_anonymous: bool = False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer.value_dtype != dtypes.int64:
            raise ValueError(f"`initializer` must map to int64 ids, got {initializer.value_dtype}.")
        self._num_oov_buckets = int(num_oov_buckets)
        self._name = name or "hash_table"
        self._table = StaticHashTable(initializer, -1, name=self._name)
        self.key_dtype = dtypes.as_dtype(lookup_key_dtype or initializer.key_dtype)
        self.value_dtype = dtypes.int64

    @property
    def resource_handle(self) -> Tensor:
        return self._table.resource_handle

    @property
    def initializer(self) -> Operation:
        return self._table.initializer

    def size(self, name: str | None = None) -> Tensor:
        """Vocabulary entries plus OOV buckets (int64)."""
        return self._table.size(name) + self._num_oov_buckets

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        """The id of each key, shaped as ``keys``."""
        from flowmesh.ops import math_ops
        from flowmesh.ops.select_ops import where
        from flowmesh.ops.string_ops import as_string, string_to_hash_bucket_fast

        keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        with name_scope(name, f"{self._name}_Lookup"):
            ids = self._table.lookup(keys)
            text = keys if keys.dtype == dtypes.string else as_string(keys)
            buckets = string_to_hash_bucket_fast(text, self._num_oov_buckets, name="hash_bucket")
            oov = math_ops.cast(buckets, dtypes.int64) + self._table.size()
            return where(ids < 0, oov, ids)

    def __getitem__(self, keys: Any) -> Tensor:
        return self.lookup(keys)


__all__ = ["KeyValueTensorInitializer", "experimental", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer"]
