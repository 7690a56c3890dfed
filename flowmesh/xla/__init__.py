"""``tf.xla``: only ``tf.xla.experimental`` (``jit_scope``, ``compile``)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "xla")
