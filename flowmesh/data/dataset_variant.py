"""A dataset as a value: its ``variant`` tensor (``to_variant`` / ``from_variant``), its
element structure (``get_structure``) and its one element (``get_single_element``, run by
``DatasetToSingleElement`` inside a step)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.ops._builders import make_op


def to_variant(dataset: Dataset) -> Tensor:
    """The scalar ``variant`` tensor holding ``dataset``.

    Raises:
        TypeError: ``dataset`` is not a dataset.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"to_variant takes a tf.data.Dataset, got {type(dataset).__name__}")
    return dataset._variant_tensor


def from_variant(variant: Tensor, structure: Any) -> Dataset:
    """The dataset a ``variant`` tensor holds, whose elements have ``structure`` (nested
    ``TensorSpec``, as ``get_structure`` returns).

    Raises:
        TypeError: ``variant`` is not a scalar variant tensor.
    """
    if not isinstance(variant, Tensor) or variant.dtype != dtypes.variant:
        raise TypeError(f"from_variant takes a variant tensor (tf.data.experimental.to_variant), got {variant!r}")
    return Dataset(variant, structure)


def get_structure(dataset_or_iterator: Any) -> Any:
    """The element spec (nested ``TensorSpec``) of a dataset or an iterator.

    Raises:
        TypeError: neither a dataset nor an iterator.
    """
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None:
        raise TypeError(f"Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` or "
                        f"tf.data.Iterator object, but got {type(dataset_or_iterator)}.")
    return spec


def get_single_element(dataset: Dataset) -> Any:
    """The one element of ``dataset`` (nested like its element spec), computed when run.

    Raises:
        TypeError: ``dataset`` is not a dataset.
        InvalidArgumentError: (when run) the dataset has no element or more than one.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got {type(dataset)}.")
    spec = dataset.element_spec
    op = make_op("DatasetToSingleElement", [dataset._variant_tensor],
                 {"output_types": st.flat_types(spec), "output_shapes": st.flat_shapes(spec)},
                 name="DatasetToSingleElement")
    return st.from_components(spec, list(op.outputs))
