"""``tf.RaggedTensorSpec``: the static description of a ``RaggedTensor`` (shape with ``None``
for ragged dimensions, dtype, ragged rank, row-splits dtype).

Its ``value_type`` is set by ``ragged_tensor.py`` (which imports this module) so the two do
not import each other.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.ragged_tensor_value import RaggedTensorValue
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.core.type_spec import ShapedTypeSpec, TypeSpec, common_shape


class RaggedTensorSpec(ShapedTypeSpec):
    """The type of a ``RaggedTensor`` (``tf.RaggedTensorSpec``).

    Args:
        shape: the static shape; ragged dimensions are ``None``.
        dtype: the element dtype.
        ragged_rank: the number of ragged dimensions (default ``rank(shape) - 1``).
        row_splits_dtype: ``int32`` or ``int64``.
        flat_values_spec: a ``TensorSpec`` of the flat values (overrides ``dtype``).

    Raises:
        ValueError: ``ragged_rank`` is not below the rank, or ``row_splits_dtype`` is invalid.
    """

    def __init__(self, shape: Any = None, dtype: Any = dtypes.float32, ragged_rank: int | None = None,
                 row_splits_dtype: Any = dtypes.int64, flat_values_spec: Any = None):
        self._shape = as_shape(shape)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if self._row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64, got {self._row_splits_dtype.name}")
        self._flat_values_spec = flat_values_spec
        self._dtype = dtypes.as_dtype(dtype if flat_values_spec is None else flat_values_spec.dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank (e.g. "
                                 "RaggedTensorSpec([None, None], tf.float32))")
            ragged_rank = rank - 1
        self._ragged_rank = int(ragged_rank)
        if self._ragged_rank < 1 and rank != 1:
            raise ValueError(f"ragged_rank must be at least 1, got {ragged_rank}")
        if rank is not None and not 0 <= self._ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be non-negative and less than the rank {rank}, got {ragged_rank}")

    def _fields(self) -> tuple[Any, ...]:
        if self._flat_values_spec is not None:
            return self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype, self._flat_values_spec
        return self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype

    def most_specific_compatible_type(self, other: TypeSpec) -> TypeSpec:
        """The spec both are compatible with.

        Raises:
            ValueError: different dtypes, ragged ranks or incompatible shapes.
        """
        if not self.is_compatible_with(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        shape = common_shape(self._shape, other.shape)  # type: ignore[attr-defined]
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    most_specific_common_supertype = most_specific_compatible_type

    @property
    def ragged_rank(self) -> int:
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits_dtype

    @property
    def flat_values_spec(self) -> Any:
        return self._flat_values_spec

    def _to_components(self, value: Any) -> list[Any]:
        """``[flat_values, *nested_row_splits]`` (TensorFlow's component order)."""
        return [value.flat_values, *value.nested_row_splits]

    def _from_components(self, components: Any) -> Any:
        """A RaggedTensor from graph components, a RaggedTensorValue from fetched NumPy ones."""
        flat, *splits = list(components)
        if isinstance(flat, Tensor):
            return self.value_type.from_nested_row_splits(flat, splits, validate=False)
        result = flat
        for s in reversed(splits):
            result = RaggedTensorValue(result, s)
        return result

    def _component_count(self) -> int:
        return 1 + self._ragged_rank

    @classmethod
    def from_value(cls, value: Any) -> RaggedTensorSpec:
        """The spec of a ``RaggedTensor`` or ``RaggedTensorValue``."""
        if hasattr(value, "_type_spec"):
            return value._type_spec
        return cls(TensorShape(list(value.shape)), dtypes.as_dtype(value.dtype), value.ragged_rank,
                   dtypes.as_dtype(value.row_splits.dtype))

