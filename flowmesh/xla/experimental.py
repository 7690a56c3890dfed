"""``tf.xla.experimental``: XLA clustering requests; flowmesh records them in the graph as
TensorFlow does and runs the ops on its own kernels (see :mod:`flowmesh.ops.xla_compile`)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "xla.experimental")
