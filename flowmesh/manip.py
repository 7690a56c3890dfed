"""``tf.manip``: TensorFlow 1.x's namespace of tensor manipulations (the same ops as the
top level's)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "manip")
