"""``tf.debugging.experimental``: dumping op outputs for later debugging."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "debugging.experimental")
