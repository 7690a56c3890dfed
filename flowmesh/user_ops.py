"""``tf.user_ops``: TensorFlow's example of a user-defined op."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core.graph import Tensor

_fill_namespace(globals(), "user_ops")


def my_fact() -> Tensor:
    """A scalar string tensor holding a fact (TensorFlow's ``Fact`` example op)."""
    from flowmesh.ops.constant_op import constant

    return constant(b"0! == 1", name="Fact")
