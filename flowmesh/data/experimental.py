"""``tf.data.experimental``: the names flowmesh supports."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "data.experimental")
