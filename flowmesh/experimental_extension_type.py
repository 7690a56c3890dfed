"""``tf.experimental.extension_type``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "experimental.extension_type")
