"""``tf.queue``: the queue classes (``tf.queue.FIFOQueue`` is ``tf.FIFOQueue``)."""

from flowmesh.ops.data_flow_ops import FIFOQueue, QueueBase
from flowmesh.ops.queue_kinds import PaddingFIFOQueue, PriorityQueue, RandomShuffleQueue

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
