# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.xla.experimental``: XLA clustering requests; flowmesh records them in the graph as
TensorFlow does and runs the ops on its own kernels (see :mod:`flowmesh.ops.xla_compile`)."""

from flowmesh.ops.xla_compile import compile, jit_scope
