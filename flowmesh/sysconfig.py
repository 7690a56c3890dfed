"""``tf.sysconfig``: build constants and the flags for building native extensions."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "sysconfig")
