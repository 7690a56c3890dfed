"""Graph-building context managers of TensorFlow 1.x beyond ``name_scope``/``variable_scope``:
``tf.container``, ``tf.init_scope`` and the TensorFlow 0.x spellings ``tf.op_scope`` and
``tf.variable_op_scope``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from flowmesh.core.graph import Graph, get_default_graph, graph_of
from flowmesh.ops.variable_scope import VariableScope, variable_scope


def container(container_name: str) -> contextlib.AbstractContextManager[str]:
    """``tf.container``: variables created inside live in the resource container
    ``container_name`` of their device (``Session.reset(target, [container_name])`` clears
    them on a server)."""
    return get_default_graph().container(container_name)


def _outermost(graph: Graph) -> Graph:
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """``tf.init_scope``: lifts op creation out of control-flow function graphs (``cond``
    branches, ``while_loop`` bodies) into the outermost graph and clears the control
    dependencies, keeping the current name scope. Used to create variables and their
    initializers from inside a branch or loop body."""
    inner = get_default_graph()
    scope = inner.get_name_scope()
    outer = _outermost(inner)
    with outer.as_default(), outer.control_dependencies(None):
        if scope:
            with outer.name_scope(scope + "/"):
                yield
        else:
            yield


@contextlib.contextmanager
def op_scope(values: Any, name: str | None, default_name: str | None = None) -> Iterator[str]:
    """``tf.op_scope`` (deprecated in TensorFlow): ``name_scope(name, default_name, values)``."""
    graph = graph_of(list(values) if values is not None else [])
    with graph.as_default(), graph.name_scope(name if name is not None else default_name) as scope:
        yield scope


@contextlib.contextmanager
def variable_op_scope(values: Any, name_or_scope: Any, default_name: str | None = None,
                      **kwargs: Any) -> Iterator[VariableScope]:
    """``tf.variable_op_scope`` (deprecated in TensorFlow): ``variable_scope(name_or_scope,
    default_name, values, **kwargs)``."""
    with variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs) as scope:
        yield scope
