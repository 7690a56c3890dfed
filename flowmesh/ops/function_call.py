"""Building ops that call function graphs (``If``, ``While``): the shared captured inputs,
the op itself (control captures become control inputs) and the conversion of returned
values to function outputs. ``cond.py``, ``while_loop.py`` and ``while_grad.py`` use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import FuncGraph
from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.ops.array_ops import identity


def function_op_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return list(zip(attrs["Tout"], attrs["output_shapes"]))


def unify_captures(functions: Sequence[FuncGraph]) -> list[Tensor]:
    """Gives every function the same captured inputs (the union, in first-seen order)."""
    externals: list[Tensor] = []
    seen: set[Tensor] = set()
    for fn in functions:
        for tensor in fn.external_captures:
            if tensor not in seen:
                seen.add(tensor)
                externals.append(tensor)
    for fn in functions:
        fn.use_captures(externals)
    return externals


def create_function_op(graph: Graph, op_type: str, inputs: Sequence[Tensor],
                       functions: Sequence[FuncGraph], attrs: dict[str, Any], name: str,
                       colocate_with: Operation | None = None) -> Operation:
    """Creates an If/While op in ``graph``; control captures become control inputs."""
    controls: list[Operation] = []
    for fn in functions:
        controls.extend(c for c in fn.control_captures if c not in controls)
    colocation = graph.colocate_with(colocate_with) if (
        colocate_with is not None and colocate_with.graph is graph) else contextlib.nullcontext()
    with graph.as_default(), colocation, graph.control_dependencies(controls):
        op = graph.create_op(op_type, list(inputs), attrs, name=name)
    for fn in functions:
        fn.seal()
    return op


def function_output(graph: FuncGraph, value: Any, what: str, pred: Tensor | None = None) -> Tensor:
    """Converts one returned leaf to a tensor of ``graph`` (captured if it is outer).

    An Operation becomes a control dependency of ``identity(pred)`` (TensorFlow 1.x
    returns the predicate for branches that return ops).

    Raises:
        ValueError: for ``None``.
    """
    if value is None:
        raise ValueError(f"{what} returned None; it must return tensors (or ops).")
    if isinstance(value, Operation):
        if pred is None:
            raise TypeError(f"{what} returned the Operation {value.name}; return a Tensor.")
        with graph.control_dependencies([value]):
            return identity(graph.capture(pred) if pred.graph is not graph else pred)
    tensor = convert_to_tensor(value)
    if tensor.graph is not graph:
        tensor = graph.capture(tensor)
    return tensor
