"""``tf.random.experimental``: the stateful ``Generator`` and the stateless helpers."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "random.experimental")
