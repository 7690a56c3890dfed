"""``IndexedSlices``: a sparse gradient, rows ``values`` at ``indices`` of a dense tensor.

Gradients of ``gather`` and ``embedding_lookup`` are IndexedSlices so optimizers can
update only the touched rows (and, across tasks, only those rows travel).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from flowmesh.core import op_hooks
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import unknown_shape

IndexedSlicesValue = namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """A sparse representation of a dense tensor: ``dense[indices[i]] += values[i]``."""

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Tensor | None:
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        return self._values.dtype

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def op(self) -> Any:
        return self._values.op

    @property
    def graph(self) -> Any:
        return self._values.graph

    @property
    def shape(self) -> Any:
        if self._dense_shape is None:
            return unknown_shape()
        return op_hooks.call("shape_from_tensor", self._dense_shape)

    def get_shape(self) -> Any:
        return self.shape

    def _fetch_components(self):
        parts = [self._values, self._indices]
        if self._dense_shape is not None:
            parts.append(self._dense_shape)

        def rebuild(values: Any, indices: Any, dense_shape: Any = None) -> IndexedSlicesValue:
            return IndexedSlicesValue(values, indices, dense_shape)

        return parts, rebuild

    def __repr__(self) -> str:
        return (f"IndexedSlices(indices={self._indices}, values={self._values}"
                f"{', dense_shape=' + str(self._dense_shape) if self._dense_shape is not None else ''})")

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices(op_hooks.call("negative", self._values), self._indices, self._dense_shape)
