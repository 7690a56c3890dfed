"""``tf.mixed_precision.experimental``: the loss scales."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "mixed_precision.experimental")
