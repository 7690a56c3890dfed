"""``tf.edit_distance``: the Levenshtein distance between the sequences of two
``SparseTensor``s (the last dimension holds the sequence; the others index it), optionally
divided by the truth's length (``inf`` for an empty truth against a non-empty hypothesis)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops._builders import constant_value, make_tensor


def _edit_distance_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    h, t = constant_value(inputs[2]), constant_value(inputs[5])
    if h is not None and t is not None and len(h) == len(t):
        return [(dtypes.float32, TensorShape([int(max(a, b)) for a, b in zip(h[:-1], t[:-1])]))]
    rank = inputs[2].shape.as_list()[0] if inputs[2].shape.rank == 1 else None
    return [(dtypes.float32, unknown_shape(rank - 1) if rank else unknown_shape())]


register_op("EditDistance", _edit_distance_shape, not_differentiable=True)


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance") -> Tensor:
    """Per-sequence edit distances of ``hypothesis`` and ``truth`` (``SparseTensor``s of equal
    rank and dtype) as a float32 tensor of shape ``max(dense_shape[:-1])``.

    Raises:
        TypeError: an argument that is not a SparseTensor, or mismatched dtypes.
    """
    for arg, value in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(value, SparseTensor):
            raise TypeError(f"tf.edit_distance: {arg} must be a SparseTensor, got {type(value).__name__}")
    if hypothesis.values.dtype != truth.values.dtype:
        raise TypeError(f"tf.edit_distance: hypothesis values {hypothesis.values.dtype.name} and truth values "
                        f"{truth.values.dtype.name} must have the same dtype")
    with name_scope(name, "edit_distance", [hypothesis, truth]):
        inputs = [hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                  truth.indices, truth.values, truth.dense_shape]
        return make_tensor("EditDistance", inputs, {"normalize": bool(normalize), "T": hypothesis.values.dtype},
                           name="EditDistance")
