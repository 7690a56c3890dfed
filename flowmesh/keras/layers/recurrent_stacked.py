"""Cells of one's own and stacks of cells for ``RNN``: ``AbstractRNNCell``,
``StackedRNNCells``, and the helpers ``RNN`` reads any cell through (a cell need only
define ``state_size`` and ``call(inputs, states) -> (output, new_states)``, as in Keras)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops


def state_sizes(cell: Any) -> list[int]:
    """The cell's state sizes as a flat list (``state_size``: an int or a sequence)."""
    own = getattr(cell, "_state_sizes", None)
    if callable(own):
        return list(own())
    size = cell.state_size
    sizes = list(size) if isinstance(size, (list, tuple)) else [size]
    return [int(s.as_list()[-1]) if hasattr(s, "as_list") else int(s) for s in sizes]


def output_size(cell: Any) -> int:
    size = getattr(cell, "output_size", None)
    return int(size) if size is not None else state_sizes(cell)[0]


def initial_state(cell: Any, batch: Any, dtype: Any) -> list[Any]:
    """The cell's ``get_initial_state(batch, dtype)``, else zeros of each state size."""
    own = getattr(cell, "get_initial_state", None)
    if callable(own):
        return list(own(batch, dtype))
    return [array_ops.zeros(array_ops.stack([batch, s]) if not isinstance(batch, int) else [batch, s], dtype=dtype)
            for s in state_sizes(cell)]


class AbstractRNNCell(Layer):
    """Base class of a cell: subclasses define ``state_size``, ``output_size`` and
    ``call(inputs, states) -> (output, new_states)``."""

    @property
    def state_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    def get_initial_state(self, batch_size: Any = None, dtype: Any = None, inputs: Any = None) -> list[Any]:
        if inputs is not None:
            batch_size, dtype = array_ops.shape(inputs)[0], inputs.dtype
        return [array_ops.zeros(array_ops.stack([batch_size, s]) if not isinstance(batch_size, int)
                                else [batch_size, s], dtype=dtype) for s in state_sizes(self)]


class StackedRNNCells(Layer):
    """Cells applied one after another at each step (the states of all, in order); the
    output is the last cell's. ``RNN([cell1, cell2])`` builds one."""

    def __init__(self, cells: list[Any], **kwargs: Any):
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` attribute. Received "
                                 f"cells={cells}")
        super().__init__(**kwargs)
        self.cells = list(cells)

    @property
    def state_size(self) -> tuple:
        return tuple(cell.state_size for cell in self.cells)

    @property
    def output_size(self) -> int:
        return output_size(self.cells[-1])

    def _state_sizes(self) -> list[int]:
        return [s for cell in self.cells for s in state_sizes(cell)]

    def get_initial_state(self, batch_size: Any, dtype: Any) -> list[Any]:
        return [s for cell in self.cells for s in initial_state(cell, batch_size, dtype)]

    def build(self, input_shape: Any) -> None:
        from flowmesh.core.graph import get_default_graph

        shape = TensorShape(input_shape)
        for cell in self.cells:
            with get_default_graph().name_scope(cell.name):
                cell.build(shape)
            cell.built = True
            shape = TensorShape([shape[0], output_size(cell)])
        self.built = True

    def call(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        states, new_states, x = list(states), [], inputs
        for cell in self.cells:
            n = len(state_sizes(cell))
            x, cell_states = cell.call(x, states[:n])
            states = states[n:]
            new_states += list(cell_states) if isinstance(cell_states, (list, tuple)) else [cell_states]
        return x, new_states

    def prepare_dropout(self, x: Any, training: Any) -> None:
        """Each cell's dropout masks for its own input (zeros of its width after the first)."""
        for cell in self.cells:
            prepare = getattr(cell, "prepare_dropout", None)
            if prepare is not None:
                prepare(x, training)
            x = array_ops.zeros(array_ops.stack([array_ops.shape(x)[0], output_size(cell)]), dtype=x.dtype)

    def clear_dropout(self) -> None:
        for cell in self.cells:
            if hasattr(cell, "clear_dropout"):
                cell.clear_dropout()

    def get_config(self) -> dict[str, Any]:
        from flowmesh.keras.saving.model_config import layer_config

        return {**super().get_config(), "cells": [layer_config(cell) for cell in self.cells]}

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict | None = None) -> StackedRNNCells:
        from flowmesh.keras.saving.model_config import layer_from_config

        config = dict(config)
        cells = [layer_from_config(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)
