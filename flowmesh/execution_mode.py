"""The TensorFlow 2 behaviour switches that 1.x programs call first.

flowmesh only has graph mode, so the switches that ask for it are no-ops and the ones
that ask for eager execution say how to proceed instead of silently doing nothing.
"""

from __future__ import annotations

from typing import Any


def disable_v2_behavior() -> None:
    """No-op: flowmesh always behaves like TensorFlow 1.x."""


def disable_eager_execution() -> None:
    """No-op: flowmesh always builds graphs and runs them in sessions."""


def executing_eagerly() -> bool:
    """Always False: ops build graph nodes; ``Session.run`` executes them."""
    return False


def _no_eager(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(
        "flowmesh runs TensorFlow 1.x graph-mode programs only: build the graph, then run it "
        "in a tf.Session (or MonitoredTrainingSession). Remove the call that enables eager "
        "execution / v2 behaviour.")


enable_eager_execution = _no_eager
enable_v2_behavior = _no_eager


def executing_eagerly_outside_functions() -> bool:
    """Always False: outside functions too, flowmesh builds graphs
    (``tf.executing_eagerly_outside_functions``)."""
    return False
