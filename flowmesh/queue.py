# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.queue``: the queue classes (``tf.queue.FIFOQueue`` is ``tf.FIFOQueue``)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "queue")

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
