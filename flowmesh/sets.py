# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.sets``: set operations along the last dimension (``tf.compat.v1.sets``)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "sets")

__all__ = ["difference", "intersection", "set_difference", "set_intersection", "set_size", "set_union", "size",
           "union"]
