"""Grouping and ordering: ``no_op``, ``group``, ``tuple``, ``with_dependencies``.

Conditionals and loops (``cond``, ``case``, ``while_loop``) live in ``cond.py`` and
``while_loop.py`` and are re-exported here.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from flowmesh.core.graph import Operation, Tensor, control_dependencies, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import make_op, no_outputs
from flowmesh.ops.array_ops import identity

register_op("NoOp", no_outputs, not_differentiable=True)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor."""
    return make_op("NoOp", [], name=name or "NoOp")


def _as_op(x: Any) -> Operation:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, IndexedSlices):
        return x.values.op
    element = getattr(x, "_as_graph_element", None)
    if element is not None:
        return _as_op(element())
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"Expected a Tensor or Operation in tf.group, got {x!r}")


def group(*inputs: Any, name: str | None = None) -> Operation:
    """An op that runs after all ``inputs`` (tensors or ops)."""
    flat: list[Any] = []
    for x in inputs:
        if isinstance(x, (list, builtins.tuple)):
            flat.extend(x)
        elif isinstance(x, dict):
            flat.extend(x.values())
        elif x is not None:
            flat.append(x)
    ops = [_as_op(x) for x in flat]
    if not ops:
        return no_op(name=name)
    graph = ops[0].graph
    with graph.as_default(), name_scope(name, "group_deps") as scope:
        with control_dependencies(ops):
            return no_op(name=scope)


def tuple(tensors: Sequence[Any], name: str | None = None, control_inputs: Any = None) -> list[Any]:  # noqa: A001
    """Returns identities of ``tensors`` that are only available after all of them are."""
    with name_scope(name, "tuple") as scope:
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or []))
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(with_dependencies([gate], t))
        del scope
        return out


def with_dependencies(dependencies: Sequence[Any], output_tensor: Any, name: str | None = None) -> Any:
    """``output_tensor``, produced only after ``dependencies`` have run."""
    with name_scope(name, "control_dependency") as scope:
        with control_dependencies(dependencies):
            if isinstance(output_tensor, IndexedSlices):
                return IndexedSlices(identity(output_tensor.values, name=scope),
                                     output_tensor.indices, output_tensor.dense_shape)
            return identity(output_tensor, name=scope)
