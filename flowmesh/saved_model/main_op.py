"""``tf.saved_model.main_op``: the op a loader runs after restoring (initializers, restore)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Operation


def main_op() -> Operation:
    """One op that runs the global and local variable initializers and the table initializers
    (``tf.saved_model.main_op.main_op``)."""
    from flowmesh.ops.control_flow_ops import group
    from flowmesh.ops.lookup_ops import tables_initializer
    from flowmesh.ops.variables import global_variables_initializer, local_variables_initializer

    return group(global_variables_initializer(), local_variables_initializer(),
                 tables_initializer())


def main_op_with_restore(restore_op_name: Any) -> Operation:
    """:func:`main_op`, then ``restore_op_name`` (an op or its name), as one op
    (``tf.saved_model.main_op_with_restore``)."""
    from flowmesh.core.graph import control_dependencies, get_default_graph
    from flowmesh.ops.control_flow_ops import group

    restore = restore_op_name
    if isinstance(restore_op_name, str):
        restore = get_default_graph().as_graph_element(restore_op_name)
    with control_dependencies([main_op()]):
        return group(restore)
