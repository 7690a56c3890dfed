"""``tf.sets``: set operations along the last dimension (``tf.compat.v1.sets``)."""

from flowmesh.ops.set_ops import set_difference, set_intersection, set_size, set_union

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union

__all__ = ["difference", "intersection", "set_difference", "set_intersection", "set_size", "set_union", "size",
           "union"]
