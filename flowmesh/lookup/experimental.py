"""``tf.lookup.experimental``: the mutable tables."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "lookup.experimental")
