"""TensorFlow 1.x framework switches and constants, answered for what flowmesh is: variables
are always resource variables and control flow is always functional (``If``/``While``), so
the "v2" behaviours are on and cannot be turned off; ``AggregationMethod`` and
``UnconnectedGradients`` name the options ``tf.gradients`` accepts."""

from __future__ import annotations

import enum

from flowmesh.core.graph_def import PRODUCER
from flowmesh.unsupported import V1_CONTROL_FLOW, unsupported

GRAPH_DEF_VERSION = PRODUCER
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0


class AggregationMethod:
    """How ``tf.gradients`` sums gradients reaching one tensor; flowmesh always adds them with
    ``AddN`` (every method gives the same sum)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(enum.Enum):
    """``tf.gradients(..., unconnected_gradients=)``: ``NONE`` or ``ZERO``."""

    NONE = "none"
    ZERO = "zero"


def resource_variables_enabled() -> bool:
    """True: every flowmesh variable is a resource variable."""
    return True


def enable_resource_variables() -> None:
    """A no-op: resource variables are always on in flowmesh."""


def control_flow_v2_enabled() -> bool:
    """True: flowmesh's ``cond``/``while_loop`` are functional (``If``/``While``)."""
    return True


def enable_control_flow_v2() -> None:
    """A no-op: control flow v2 is always on in flowmesh."""


disable_control_flow_v2 = unsupported("disable_control_flow_v2", V1_CONTROL_FLOW)
disable_resource_variables = unsupported(
    "disable_resource_variables", "flowmesh has only resource variables (no reference VariableV2 kernels)")


def no_regularizer(_: object) -> None:
    """A regularizer that adds no loss (``tf.no_regularizer``)."""
    return None


_TENSOR_EQUALITY = [True]


def enable_tensor_equality() -> None:
    """``tf.enable_tensor_equality``: TensorFlow 2's elementwise ``==`` on tensors. It only
    applies where TensorFlow executes eagerly; graph tensors (all of flowmesh's) keep
    comparing by identity and stay hashable, exactly as in TensorFlow's graph mode."""
    _TENSOR_EQUALITY[0] = True


def disable_tensor_equality() -> None:
    """``tf.disable_tensor_equality``: ``==`` compares tensors by identity (graph tensors
    always do; see :func:`enable_tensor_equality`)."""
    _TENSOR_EQUALITY[0] = False


def enable_v2_tensorshape() -> None:
    """``tf.enable_v2_tensorshape``: indexing or iterating a ``TensorShape`` gives ints
    (or ``None``) instead of ``Dimension`` objects, for the whole process."""
    from flowmesh.core import shapes

    shapes.set_v2_dimensions(True)


def disable_v2_tensorshape() -> None:
    """``tf.disable_v2_tensorshape``: ``TensorShape`` indexing gives ``Dimension`` objects
    (flowmesh's default, TensorFlow 1.x behaviour)."""
    from flowmesh.core import shapes

    shapes.set_v2_dimensions(False)
