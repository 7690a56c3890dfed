"""``tf.experimental`` (``tf.compat.v1.experimental``): extension types, API dispatch and the
low-precision dtypes."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "experimental")

