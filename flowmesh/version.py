"""``tf.version``: the version constants (flowmesh's, see :mod:`flowmesh.build_info`)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "version")
