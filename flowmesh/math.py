"""``tf.math``: elementwise math, reductions, segment ops and special functions.

Everything here is also reachable where TensorFlow 1.x puts it (``tf.add``,
``tf.reduce_sum``, ``tf.nn.softplus`` ...); this module is the ``tf.math`` spelling.
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "math")

__all__ = sorted(name for name in dir() if not name.startswith("_"))
