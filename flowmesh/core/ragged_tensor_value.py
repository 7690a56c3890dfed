"""``tf.ragged.RaggedTensorValue``: a fetched ``RaggedTensor`` (NumPy ``values`` + ``row_splits``).

``Session.run`` returns one for every fetched ``RaggedTensor`` (as TensorFlow 1.x does), and
a ``RaggedTensorValue`` is what a ``tf.ragged.placeholder`` is fed with. Row ``i`` of the
value is ``values[row_splits[i]:row_splits[i + 1]]``; ``values`` is itself a
``RaggedTensorValue`` for each further ragged dimension.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class RaggedTensorValue:
    """The value of a ``RaggedTensor`` (``tf.compat.v1.ragged.RaggedTensorValue``).

    Args:
        values: a NumPy array (the rows' elements, one row after the other), or a
            ``RaggedTensorValue`` for nested ragged dimensions.
        row_splits: a 1-D int32 or int64 NumPy array, ``[0, ..., len(values)]``.

    Raises:
        TypeError: ``row_splits`` is not a 1-D int32/int64 array, or ``values`` is not an array.
        ValueError: ``row_splits`` and ``values.row_splits`` differ in dtype.
    """

    def __init__(self, values: Any, row_splits: Any):
        if not (isinstance(row_splits, (np.ndarray, np.generic)) and row_splits.dtype in (np.int64, np.int32)
                and row_splits.ndim == 1):
            raise TypeError("row_splits must be a 1D int32 or int64 numpy array (e.g. "
                            "np.array([0, 2, 3], np.int64))")
        if not isinstance(values, (np.ndarray, np.generic, RaggedTensorValue)):
            raise TypeError(f"values must be a numpy array or a RaggedTensorValue, got {type(values).__name__}")
        if isinstance(values, RaggedTensorValue) and row_splits.dtype != values.row_splits.dtype:
            raise ValueError("row_splits and values.row_splits must have the same dtype")
        self._values = values
        self._row_splits = row_splits

    @property
    def row_splits(self) -> np.ndarray:
        """The split indices: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``."""
        return self._row_splits

    @property
    def values(self) -> Any:
        """The concatenated rows (an array, or a ``RaggedTensorValue``)."""
        return self._values

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements."""
        return self._values.dtype

    @property
    def flat_values(self) -> np.ndarray:
        """The innermost values array."""
        values = self._values
        while isinstance(values, RaggedTensorValue):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple[np.ndarray, ...]:
        """The row_splits of every ragged dimension, outermost first."""
        splits = [self._row_splits]
        values = self._values
        while isinstance(values, RaggedTensorValue):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return self._values.ragged_rank + 1 if isinstance(self._values, RaggedTensorValue) else 1

    @property
    def shape(self) -> tuple[int | None, ...]:
        """``(nrows, None, ...)``: the ragged dimensions are ``None``."""
        return (self._row_splits.shape[0] - 1, None) + tuple(self._values.shape[1:])

    def to_list(self) -> list[Any]:
        """This value as a nested Python list."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensorValue) else self._values.tolist()
        return [inner[self._row_splits[i]:self._row_splits[i + 1]] for i in range(len(self._row_splits) - 1)]

    def __str__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()}>"

    def __repr__(self) -> str:
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"
