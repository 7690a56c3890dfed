"""The global step: ``get_or_create_global_step``, ``get_global_step``, ``global_step``."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, GraphKeys, get_default_graph
from flowmesh.ops import init_ops
from flowmesh.ops.variables import Variable


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's global step variable, or None."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise TypeError("There should be only one global step variable in the graph.")
    if steps:
        return steps[0]
    try:
        found = graph.get_tensor_by_name("global_step/read:0")
    except KeyError:
        return None
    del found
    return None


def create_global_step(graph: Graph | None = None) -> Variable:
    """Creates the int64 scalar ``global_step`` variable (error if it exists)."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    from flowmesh.ops.variable_scope import get_variable

    with graph.as_default(), graph.name_scope(None):
        return get_variable(
            "global_step", shape=[], dtype=dtypes.int64, initializer=init_ops.zeros_initializer(),
            trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The global step variable, created on first use."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The current value of ``global_step_tensor`` in ``sess`` as an int."""
    return int(sess.run(global_step_tensor))
