"""``tf.SparseTensor``: ``values`` at ``indices`` of a tensor of ``dense_shape``.

A graph-side triple of tensors (``indices`` int64 ``[N, rank]``, ``values`` ``[N]``,
``dense_shape`` int64 ``[rank]``); fetching one returns a :class:`SparseTensorValue`.
``VarLenFeature`` parsing returns them; ``tf.sparse.to_dense`` densifies.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from flowmesh.core import dtypes, op_hooks
from flowmesh.core.default_session import get_default_session_or_raise
from flowmesh.core.graph import Tensor

SparseTensorValue = namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor (``tf.SparseTensor(indices, values, dense_shape)``).

    Raises:
        ValueError: ``indices``/``dense_shape`` have the wrong rank.
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        from flowmesh.core.convert import convert_to_tensor

        self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
        self._values = convert_to_tensor(values, name="values")
        self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape")
        if self._indices.shape.rank not in (None, 2):
            raise ValueError(f"SparseTensor indices must be a matrix [N, rank], got shape "
                             f"{self._indices.shape}")
        if self._dense_shape.shape.rank not in (None, 1):
            raise ValueError(f"SparseTensor dense_shape must be a vector, got shape "
                             f"{self._dense_shape.shape}")

    @classmethod
    def from_value(cls, value: Any) -> SparseTensor:
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def op(self) -> Any:
        return self._values.op

    @property
    def graph(self) -> Any:
        return self._values.graph

    @property
    def shape(self) -> Any:
        return op_hooks.call("shape_from_tensor", self._dense_shape)

    def get_shape(self) -> Any:
        return self.shape

    def _fetch_components(self) -> tuple[list[Tensor], Any]:
        return [self._indices, self._values, self._dense_shape], SparseTensorValue

    def _feed_components(self, value: Any) -> list[tuple[Tensor, Any]]:
        """Feeding a SparseTensor feeds its three tensors (a SparseTensorValue or a triple)."""
        if isinstance(value, SparseTensor):
            raise TypeError("The value of a SparseTensor feed cannot be a SparseTensor; feed a "
                            "tf.compat.v1.SparseTensorValue(indices, values, dense_shape)")
        if hasattr(value, "indices"):
            value = (value.indices, value.values, value.dense_shape)
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            raise TypeError(f"A SparseTensor feed must be a SparseTensorValue or an (indices, values, "
                            f"dense_shape) triple, got {type(value).__name__}")
        return list(zip((self._indices, self._values, self._dense_shape), value))

    def eval(self, feed_dict: Any = None, session: Any = None) -> SparseTensorValue:
        return (session or get_default_session_or_raise()).run(self, feed_dict)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")
