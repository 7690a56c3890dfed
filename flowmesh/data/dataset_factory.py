"""The ``dataset_factory`` of a one-shot iterator: the dataset's ops copied by value into a
function graph, which the iterator runs once, when it starts, instead of on every step.

TensorFlow builds ``OneShotIterator`` the same way (its dataset is a function captured by
value). A dataset that reads values a step can change (placeholders, variables, any
stateful op) or that has control dependencies cannot be captured by value: TensorFlow
refuses it; here :func:`dataset_factory` returns ``None`` and the iterator takes the
dataset as an input, as an initializable iterator does.
"""

from __future__ import annotations

from flowmesh.core.function import FuncGraph, building
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import get_op_def

_FEEDABLE = frozenset({"Placeholder", "PlaceholderWithDefault", "PlaceholderV2"})


def dataset_factory(variant: Tensor) -> FuncGraph | None:
    """A function graph with no inputs whose one output is ``variant``'s dataset, or
    ``None`` when the dataset cannot be captured by value."""
    ops = _captured_by_value(variant.op)
    if ops is None:
        return None
    factory = FuncGraph("dataset_factory", variant.graph)
    copies: dict[Tensor, Tensor] = {}
    with building(factory):
        for op in ops:
            copy = factory.create_op(op.type, [copies[t] for t in op.inputs], dict(op.attrs),
                                     name=op.name)
            copies.update(zip(op.outputs, copy.outputs))
    factory.outputs = [copies[variant]]
    factory.seal()
    return factory


def _captured_by_value(last: Operation) -> list[Operation] | None:
    """``last`` and every op it depends on, inputs first; ``None`` if one of them reads
    state or has control inputs."""
    order: list[Operation] = []
    done: set[Operation] = set()
    stack: list[tuple[Operation, bool]] = [(last, False)]
    while stack:
        op, expanded = stack.pop()
        if op in done:
            continue
        if expanded:
            done.add(op)
            order.append(op)
            continue
        if op.control_inputs or op.type in _FEEDABLE or get_op_def(op.type).stateful:
            return None
        stack.append((op, True))
        stack.extend((t.op, False) for t in op.inputs if t.op not in done)
    return order
