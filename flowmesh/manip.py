# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.manip``: TensorFlow 1.x's namespace of tensor manipulations (the same ops as the
top level's)."""

from flowmesh.ops.array_ops import reshape
from flowmesh.ops.manip_ops import reverse, roll, tile
from flowmesh.ops.nd_index_ops import gather_nd, scatter_nd
from flowmesh.ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd
