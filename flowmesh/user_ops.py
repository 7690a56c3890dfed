"""``tf.user_ops``: TensorFlow's example of a user-defined op."""

from __future__ import annotations

from flowmesh.core.graph import Tensor


def my_fact() -> Tensor:
    """A scalar string tensor holding a fact (TensorFlow's ``Fact`` example op)."""
    from flowmesh.ops.constant_op import constant

    return constant(b"0! == 1", name="Fact")
