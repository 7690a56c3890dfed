"""``dense_to_ragged_batch`` and ``RaggedTensorStructure`` (``tf.data.experimental``).

As TensorFlow's ``ragged_batch_op.py``: each dense component whose static shape has an
unknown dimension becomes a RaggedTensor of ragged rank "index of its last unknown
dimension" (0 for a vector: the element itself, whose length varies), carried as one variant
component (``flowmesh/ops/ragged_element_ops.py``); ``batch`` then stacks those into a
RaggedTensor with one more ragged dimension (``kernels/pipeline/ragged_value.py``).
Components of fully defined shape, and non-tensor components, batch as ``batch`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.deprecation import deprecated
from flowmesh.core.shapes import as_shape
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.ops import ragged_element_ops
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.ragged_tensor_spec import RaggedTensorSpec

Transform = Callable[[Dataset], Dataset]


@deprecated(None, "Use `tf.RaggedTensorSpec` instead.")
def RaggedTensorStructure(dtype: Any, shape: Any, ragged_rank: int) -> RaggedTensorSpec:  # noqa: N802 - TF's name
    """``tf.data.experimental.RaggedTensorStructure``: ``RaggedTensorSpec(shape, dtype,
    ragged_rank)`` (deprecated in TensorFlow, which returns that spec too)."""
    return RaggedTensorSpec(as_shape(shape), dtype, ragged_rank)


def _to_ragged_spec(spec: Any, row_splits_dtype: dtypes.DType) -> Any:
    if not isinstance(spec, TensorSpec) or spec.shape.rank is None or spec.shape.is_fully_defined():
        return spec
    ragged_rank = max(axis for axis, size in enumerate(spec.shape.as_list()) if size is None)
    return RaggedTensorSpec(spec.shape, spec.dtype, ragged_rank, row_splits_dtype)


def dense_to_ragged_batch(batch_size: Any, drop_remainder: bool = False,
                          row_splits_dtype: Any = dtypes.int64) -> Transform:
    """Batches elements of varying shape into RaggedTensors (``batch`` for the others).

    Args:
        batch_size: elements per batch.
        drop_remainder: drop a last batch smaller than ``batch_size``.
        row_splits_dtype: the row splits dtype of the new RaggedTensors (``int32`` or ``int64``).

    Returns:
        A transformation for ``Dataset.apply``.
    """
    splits_dtype = dtypes.as_dtype(row_splits_dtype)

    def apply(dataset: Dataset) -> Dataset:
        spec = dataset.element_spec
        ragged_spec = st.map_structure(lambda s: _to_ragged_spec(s, splits_dtype), spec)

        def encode(value: Any, new: Any) -> Any:
            if not st.is_ragged(new):
                return value
            if new.ragged_rank > 0:
                value = RaggedTensor.from_tensor(value, ragged_rank=new.ragged_rank, row_splits_dtype=splits_dtype)
            return ragged_element_ops.to_variant(value, splits_dtype)

        def to_ragged(*args: Any) -> Any:
            element = args if type(spec) is tuple else args[0]
            return st.pack(spec, [encode(v, n) for v, n in zip(st.flatten(element), st.flatten(ragged_spec))])

        encoded = dataset.map(to_ragged)
        ragged = Dataset(encoded._variant_tensor, ragged_spec, encoded.options())
        return ragged.batch(batch_size, drop_remainder=drop_remainder)

    return apply
