"""A SparseTensor carried as one component of a dataset element (a ``variant`` value).

``tf.data`` passes a ``SparseTensor`` component as one value: :class:`SparseValue` holds
its ``indices`` (int64 ``[N, rank]``), ``values`` (``[N]``; a NumPy object array for
strings) and ``dense_shape`` (int64 ``[rank]``). It slices like a tensor along its first
dimension (``from_tensor_slices``, ``unbatch``) and :meth:`SparseValue.stack` batches
like TensorFlow's sparse batching: a new first index, ``dense_shape`` the batch size then
the largest extent of each dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError


class SparseValue:
    """One sparse component: ``indices``, ``values`` and ``dense_shape``."""

    __slots__ = ("indices", "values", "dense_shape")

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices = indices
        self.values = values
        self.dense_shape = dense_shape

    def __repr__(self) -> str:
        return f"<SparseValue shape={list(self.shape)} nnz={int(self.indices.shape[0])}>"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.dense_shape.tolist())

    @property
    def ndim(self) -> int:
        return int(self.dense_shape.shape[0])

    def __getitem__(self, i: int) -> SparseValue:
        """Row ``i`` along the first dimension (rank one less)."""
        if self.ndim == 0:
            raise InvalidArgumentError("Cannot slice a scalar SparseTensor component")
        size = int(self.dense_shape[0])
        if not -size <= i < size:
            raise IndexError(f"row {i} of a SparseTensor with dense_shape {list(self.shape)}")
        mask = self.indices[:, 0] == (i % size)
        values = self.values[mask.numpy()] if isinstance(self.values, np.ndarray) else self.values[mask]
        return SparseValue(self.indices[mask][:, 1:].contiguous(), values, self.dense_shape[1:].clone())

    @staticmethod
    def stack(items: Sequence[Any], component: int, stage: str) -> SparseValue:
        """The batch of ``items`` (SparseValues of one rank).

        Raises:
            InvalidArgumentError: an item is not sparse, or the ranks differ.
        """
        if not all(isinstance(v, SparseValue) for v in items):
            raise InvalidArgumentError(f"{stage}: component {component} mixes SparseTensor and dense values")
        ranks = {v.ndim for v in items}
        if len(ranks) > 1:
            raise InvalidArgumentError(
                f"Cannot batch SparseTensors of different ranks {sorted(ranks)} in component {component} "
                f"({stage})")
        extents = torch.stack([v.dense_shape for v in items]).amax(dim=0) if ranks != {0} else \
            torch.zeros(0, dtype=torch.int64)
        dense_shape = torch.cat([torch.tensor([len(items)], dtype=torch.int64), extents.to(torch.int64)])
        indices = torch.cat([torch.cat([torch.full((v.indices.shape[0], 1), k, dtype=torch.int64),
                                        v.indices.to(torch.int64)], dim=1) for k, v in enumerate(items)])
        first = items[0].values
        values = np.concatenate([v.values for v in items]) if isinstance(first, np.ndarray) else \
            torch.cat([v.values for v in items])
        return SparseValue(indices, values, dense_shape)
