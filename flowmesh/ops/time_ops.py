"""``tf.timestamp``: the wall-clock time in seconds since the epoch, as ``float64``, taken
when the op runs (stateful: never folded or shared between runs)."""

from __future__ import annotations

from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import fixed, make_tensor

register_op("Timestamp", fixed(("float64", [])), not_differentiable=True, stateful=True)


def timestamp(name: str | None = None) -> Tensor:
    """A scalar ``float64``: seconds since the Unix epoch when the op runs."""
    return make_tensor("Timestamp", [], name=name or "Timestamp")
