"""``tf.bitwise``: bitwise operations on integer tensors."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "bitwise")
