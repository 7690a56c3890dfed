"""``MultiRNNCell``: cells stacked in depth (the output of cell ``i`` is the input of cell
``i + 1``); cell ``i`` runs in variable scope ``multi_rnn_cell/cell_<i>``."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, manip_ops
from flowmesh.ops import variable_scope as vs
from flowmesh.rnn.cell_base import RNNCell, assert_like_rnncell


class MultiRNNCell(RNNCell):
    """A stack of cells.

    Args:
        cells: list of RNNCells (the same object twice shares its weights).
        state_is_tuple: the state is a tuple of per-cell states (default); otherwise
            the cells' (non-nested) states are concatenated along axis 1.

    Raises:
        ValueError: no cells, or nested cell states with ``state_is_tuple=False``.
        TypeError: ``cells`` is not a list/tuple of cells.
    """

    def __init__(self, cells: Any, state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but received: {cells}.")
        for i, cell in enumerate(cells):
            assert_like_rnncell(f"cells[{i}]", cell)
        self._cells = list(cells)
        self._state_is_tuple = bool(state_is_tuple)
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set. "
                f"State sizes are: {[c.state_size for c in self._cells]}"
            )

    @property
    def cells(self) -> list[Any]:
        return list(self._cells)

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope("MultiRNNCellZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    def build(self, input_shape: TensorShape) -> None:
        shape = TensorShape(input_shape)
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                prebuild_cell(cell, shape, self._dtype, None)
            size = cell.output_size
            shape = TensorShape([shape[0]]).concatenate(
                TensorShape([size]) if isinstance(size, int) else TensorShape(size))

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        position = 0
        current = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(
                            f"Expected state to be a tuple of length {len(self.state_size)}, "
                            f"but received: {state}"
                        )
                    cell_state = state[i]
                else:
                    cell_state = manip_ops.slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, array_ops.concat(new_states, 1)

    @property
    def trainable_weights(self) -> list[Any]:
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])]

    @property
    def non_trainable_weights(self) -> list[Any]:
        weights = [w for cell in self._cells for w in getattr(cell, "non_trainable_weights", [])]
        if not self.trainable:
            weights = [w for cell in self._cells
                       for w in getattr(cell, "trainable_weights", [])] + weights
        return weights


def prebuild_cell(cell: Any, input_shape: TensorShape, dtype: Any, batch_size: Any) -> None:
    """Creates ``cell``'s variables before a loop (see :meth:`RNNCell.prebuild`). Objects
    that only look like cells are traced once on zeros."""
    if isinstance(cell, RNNCell):
        cell.prebuild(input_shape, dtype, batch_size)
        return
    if getattr(cell, "built", False):
        return
    with name_scope("prebuild"):  # its ops never run; variables made in __call__ now exist
        dummy = array_ops.zeros([1] + input_shape.as_list()[1:], dtype=dtype)
        cell(dummy, cell.zero_state(1, dtype))
