"""Lookup tables filled from a dataset: ``DatasetInitializer`` (its ``(key, value)``
elements, by ``InitializeTableFromDataset``), ``table_from_dataset`` and
``index_table_from_dataset`` (keys to their position), with TensorFlow's checks."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import GraphKeys, Operation, add_to_collection, name_scope
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data.dataset import Dataset
from flowmesh.lookup.table_base import KeyValueDtypes
from flowmesh.ops._builders import make_op

_BASE_ERROR = ("Datasets used to initialize lookup tables must produce elements in the form (key, value), where "
               "the keys and values are scalar tensors. ")


def _check_element_spec(spec: Any) -> None:
    if not isinstance(spec, tuple) or len(spec) != 2:
        count = len(spec) if isinstance(spec, tuple) else 1
        raise ValueError(_BASE_ERROR + f"However, the given dataset produces {count} components instead of two "
                         f"(key, value) components. Full dataset element spec: {spec}.")
    for part, what in zip(spec, ("key", "value")):
        if not isinstance(part, TensorSpec):
            raise ValueError(_BASE_ERROR + f"However, the given dataset produces non-Tensor {what}s of type "
                             f"{type(part)}.")
        if part.shape.rank not in (None, 0):
            raise ValueError(_BASE_ERROR + f"However, the given dataset produces non-scalar {what} Tensors of rank "
                             f"{part.shape.rank}.")


class DatasetInitializer(KeyValueDtypes):
    """Fills a table with the ``(key, value)`` elements of ``dataset`` (scalars).

    Raises:
        ValueError: elements that are not pairs of scalars.
    """

    def __init__(self, dataset: Dataset):
        _check_element_spec(dataset.element_spec)
        super().__init__(dataset.element_spec[0].dtype, dataset.element_spec[1].dtype)
        self.dataset = dataset

    def initialize(self, table: Any) -> Operation:
        """The op filling ``table`` (added to ``TABLE_INITIALIZERS``).

        Raises:
            TypeError: the table's dtypes are not the dataset's.
        """
        if table.key_dtype != self._key_dtype or table.value_dtype != self._value_dtype:
            raise TypeError(f"Invalid key dtype for table, expected {self._key_dtype.name} but got "
                            f"{table.key_dtype.name}; or value dtype {self._value_dtype.name} but got "
                            f"{table.value_dtype.name}.")
        op = make_op("InitializeTableFromDataset", [table.resource_handle, self.dataset._variant_tensor],
                     name="InitializeTableFromDataset")
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


def table_from_dataset(dataset: Dataset | None = None, num_oov_buckets: int = 0, vocab_size: Any = None,
                       default_value: Any = None, hasher_spec: Any = None, key_dtype: Any = dtypes.string,
                       name: str | None = None) -> Any:
    """A ``StaticHashTable`` of the ``(key, value)`` elements of ``dataset``; with
    ``num_oov_buckets`` > 0 a ``StaticVocabularyTable`` whose missing keys hash into those
    buckets (TensorFlow's ``FastHashSpec``, the only ``hasher_spec``).

    Raises:
        ValueError: elements that are not pairs of scalars, a negative ``num_oov_buckets``,
            ``vocab_size`` < 1, no ``default_value`` for non-numeric values.
        TypeError: ``key_dtype`` is neither integer nor string.
    """
    from flowmesh.data.stateful_transforms import assert_cardinality
    from flowmesh.lookup import StaticHashTable, StaticVocabularyTable

    spec = dataset.element_spec
    _check_element_spec(spec)
    if default_value is None:
        default_value = -1
        if not (spec[1].dtype.is_integer or spec[1].dtype.is_floating):
            raise ValueError("`default_value` must be specified when creating a table from a dataset that produces "
                             f"values of type {spec[1].dtype}.")
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater than or equal to 0, got {num_oov_buckets}.")
    if isinstance(vocab_size, int) and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError(f"`key_dtype` must be either an integer or string type, but got {key_dtype}")
    if vocab_size is not None:
        dataset = dataset.take(vocab_size).apply(assert_cardinality(vocab_size))
    with name_scope(name, "string_to_index"):
        initializer = DatasetInitializer(dataset)
        with name_scope(None, "hash_table"):
            if num_oov_buckets:
                return StaticVocabularyTable(initializer, num_oov_buckets, lookup_key_dtype=key_dtype)
            return StaticHashTable(initializer, default_value)


def index_table_from_dataset(dataset: Dataset | None = None, num_oov_buckets: int = 0, vocab_size: Any = None,
                             default_value: Any = -1, hasher_spec: Any = None, key_dtype: Any = dtypes.string,
                             name: str | None = None) -> Any:
    """A table mapping each key of ``dataset`` (scalars) to its position (int64), missing
    keys to ``default_value`` or, with ``num_oov_buckets``, to hash buckets after the
    vocabulary. See :func:`table_from_dataset` for the errors."""
    pairs = dataset.enumerate().map(lambda index, key: (key, index))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec, key_dtype, name)
