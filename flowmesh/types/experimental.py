"""``tf.types.experimental``: typing names for tensors and callables."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "types.experimental")
