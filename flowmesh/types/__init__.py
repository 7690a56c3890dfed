"""``tf.types``: only ``tf.types.experimental`` in TensorFlow 1.x's API."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "types")
