"""The functional graph: which layer call produced which symbolic tensor.

Every call of a layer on graph tensors records a :class:`Node` (the layer, its input and
output tensors and keyword arguments). Each output tensor's *history* is ``(layer,
node_index, tensor_index)``; ``Model(inputs, outputs)`` walks these back from its outputs.
Tensors have fixed slots, so histories live in a weak dictionary keyed by tensor.
"""

from __future__ import annotations

import weakref
from typing import Any

_HISTORY: weakref.WeakKeyDictionary[Any, tuple[Any, int, int]] = weakref.WeakKeyDictionary()


class Node:
    """One call of ``layer``: ``input_tensors`` -> ``output_tensors``.

    ``structure`` is the first argument as passed (tensor, list or dict), ``call_args`` the
    other positional arguments and ``call_kwargs`` the keyword arguments, for re-calls;
    ``input_tensors`` are every tensor among them (``MultiHeadAttention(query, value)``
    depends on both), ``first_tensors`` those of the first argument."""

    def __init__(self, layer: Any, input_tensors: list[Any], output_tensors: list[Any],
                 call_kwargs: dict[str, Any], structure: Any, call_args: tuple = ()):
        self.layer = layer
        self.input_tensors = input_tensors
        self.output_tensors = output_tensors
        self.call_kwargs = call_kwargs
        self.structure = structure
        self.call_args = tuple(call_args)
        index = len(layer._inbound_nodes)
        layer._inbound_nodes.append(self)
        for i, tensor in enumerate(output_tensors):
            _HISTORY[tensor] = (layer, index, i)

    @property
    def first_tensors(self) -> list[Any]:
        from flowmesh.core.graph import Tensor
        from flowmesh.ops import _structure as nest

        return [t for t in nest.flatten(self.structure) if isinstance(t, Tensor)]

    @property
    def inbound_layers(self) -> list[Any]:
        return [history(t)[0] for t in self.input_tensors if history(t) is not None]

    def parent_nodes(self) -> list[Node]:
        parents = []
        for tensor in self.input_tensors:
            found = history(tensor)
            if found is not None:
                parents.append(found[0]._inbound_nodes[found[1]])
        return parents


def history(tensor: Any) -> tuple[Any, int, int] | None:
    """``(layer, node_index, tensor_index)`` of a tensor a Keras layer produced, else None."""
    try:
        return _HISTORY.get(tensor)
    except TypeError:
        return None


def set_history(tensor: Any, value: tuple[Any, int, int]) -> None:
    _HISTORY[tensor] = value
