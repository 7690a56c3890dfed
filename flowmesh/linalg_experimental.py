"""``tf.linalg.experimental``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "linalg.experimental")
