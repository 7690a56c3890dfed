"""``tf.ragged`` (``tf.compat.v1.ragged``): ragged tensors, their factories and ops."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "ragged")
