"""``tf.tables_initializer``: the op that initializes every lookup table of the graph.

flowmesh's feature columns look vocabularies up without table resources, so the
``TABLE_INITIALIZERS`` collection is usually empty and this is a ``no_op``; programs written
for TensorFlow call it (and ``Scaffold`` runs it) all the same.
"""

from __future__ import annotations

from flowmesh.core.graph import GraphKeys, Operation, get_collection
from flowmesh.ops import control_flow_ops


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """Groups the ops in ``GraphKeys.TABLE_INITIALIZERS`` (a ``no_op`` when there are none)."""
    initializers = get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_flow_ops.group(*initializers, name=name)
    return control_flow_ops.no_op(name=name)
