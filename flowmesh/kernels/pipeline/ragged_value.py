"""A RaggedTensor carried as one component of a dataset element (a ``variant`` value).

:class:`RaggedValue` holds the ``flat_values`` (a torch tensor, or a NumPy object array for
strings) and the ``nested_row_splits`` (int tensors of ``splits_dtype``); with no splits it is
a ragged-rank-0 value, a dense tensor whose first dimension may differ between elements.
:meth:`RaggedValue.stack` batches (and indexing unbatches) as TensorFlow's datasets do for ragged
components: a new outermost ragged dimension whose rows are the elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError


class RaggedValue:
    """One ragged component: ``flat_values`` and ``nested_row_splits`` (outermost first)."""

    __slots__ = ("flat_values", "nested_row_splits", "splits_dtype")

    def __init__(self, flat_values: Any, nested_row_splits: Sequence[Any], splits_dtype: torch.dtype):
        self.flat_values = flat_values
        self.nested_row_splits = list(nested_row_splits)
        self.splits_dtype = splits_dtype

    def __repr__(self) -> str:
        return f"<RaggedValue ragged_rank={len(self.nested_row_splits)} nvals={len(self.flat_values)}>"

    def nrows(self) -> int:
        splits = self.nested_row_splits
        return int(splits[0].shape[0]) - 1 if splits else int(self.flat_values.shape[0])

    @property
    def shape(self) -> tuple[int | None, ...]:
        """``nrows``, then ``None`` for each ragged dimension, then the flat values' inner shape."""
        inner = tuple(int(d) for d in self.flat_values.shape[1:])
        return (self.nrows(), *([None] * len(self.nested_row_splits)), *inner)

    def __getitem__(self, i: int) -> RaggedValue:
        """Row ``i`` (``unbatch``): one ragged dimension less."""
        size = self.nrows()
        if not -size <= i < size:
            raise IndexError(f"row {i} of a ragged value with {size} rows")
        start, stop = i % size, i % size + 1
        levels = []
        for splits in self.nested_row_splits:
            begin, end = int(splits[start]), int(splits[stop])
            levels.append(splits[start:stop + 1] - splits[start])
            start, stop = begin, end
        return RaggedValue(self.flat_values[start:stop], levels[1:], self.splits_dtype)

    @staticmethod
    def stack(items: Sequence[Any], component: int, stage: str) -> RaggedValue:
        """The batch of ``items`` (RaggedValues of one ragged rank): one more ragged dimension.

        Raises:
            InvalidArgumentError: an item is not ragged, or the ragged ranks or inner shapes differ.
        """
        if not all(isinstance(v, RaggedValue) for v in items):
            raise InvalidArgumentError(f"{stage}: component {component} mixes ragged and dense values")
        ranks = {len(v.nested_row_splits) for v in items}
        inner = {tuple(v.flat_values.shape[1:]) for v in items}
        if len(ranks) > 1 or len(inner) > 1:
            raise InvalidArgumentError(
                f"Cannot batch ragged values of different ragged ranks {sorted(ranks)} or inner shapes "
                f"{sorted(inner)} in component {component} ({stage})")
        dtype = items[0].splits_dtype
        outer = torch.tensor([0] + [v.nrows() for v in items], dtype=torch.int64).cumsum(0).to(dtype)
        levels = [outer]
        for level in range(ranks.pop()):
            offset, parts = 0, []
            for k, v in enumerate(items):
                splits = v.nested_row_splits[level]
                parts.append(splits[(0 if k == 0 else 1):] + offset)
                offset += int(splits[-1])
            levels.append(torch.cat(parts).to(dtype))
        first = items[0].flat_values
        flat = np.concatenate([v.flat_values for v in items]) if isinstance(first, np.ndarray) else \
            torch.cat([v.flat_values for v in items])
        return RaggedValue(flat, levels, dtype)
