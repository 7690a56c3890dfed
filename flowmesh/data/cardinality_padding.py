"""``pad_to_cardinality``: a dataset of dicts padded with zero elements up to a number of
elements, each element marked valid or padding under ``mask_key`` (TensorFlow's
construction: ``map`` adding the mask, then ``concatenate`` a repeated filler element)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import control_dependencies
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset

Transform = Callable[[Dataset], Dataset]


def pad_to_cardinality(cardinality: Any, mask_key: str = "valid") -> Transform:
    """Pads a dataset of dicts (fully defined shapes) with zero-valued elements up to
    ``cardinality`` elements; ``element[mask_key]`` is ``True`` for the dataset's own
    elements and ``False`` for the padding.

    Raises:
        ValueError: (when applied) elements that are not dicts, that already hold
            ``mask_key``, or whose shapes are not fully defined.
        InvalidArgumentError: (when run) the dataset has more than ``cardinality`` elements,
            or an infinite or unknown number.
    """
    from flowmesh.data.stateful_transforms import cardinality as cardinality_of
    from flowmesh.ops import array_ops
    from flowmesh.ops.logging_ops import Assert

    def apply(dataset: Dataset) -> Dataset:
        spec = dataset.element_spec
        if not isinstance(spec, dict):
            raise ValueError(f"pad_to_cardinality takes a dataset of dicts, got elements {spec!r}")
        if mask_key in spec:
            raise ValueError(f"pad_to_cardinality: the elements already have the key {mask_key!r}; pick another "
                             "mask_key")
        for key, leaf in spec.items():
            if not isinstance(leaf, TensorSpec) or not leaf.shape.is_fully_defined():
                raise ValueError(f"pad_to_cardinality: element {key!r} has spec {leaf!r}; the filler needs fully "
                                 "defined shapes")
        count = cardinality_of(dataset)
        target = convert_to_tensor(cardinality, dtype=dtypes.int64)
        check = Assert(count >= 0, ["pad_to_cardinality needs a dataset of known, finite cardinality, got", count])
        fits = Assert(count <= target, ["The dataset has more elements than the target cardinality", count, target])
        with control_dependencies([check, fits]):
            padding = target - count
        filler = st.map_structure(lambda s: array_ops.zeros(s.shape.as_list(), s.dtype), spec)
        filler = dict(filler, **{mask_key: convert_to_tensor(False)})
        valid = dataset.map(lambda element: dict(element, **{mask_key: convert_to_tensor(True)}))
        return valid.concatenate(Dataset.from_tensors(filler).repeat(padding))

    return apply
