# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.xla``: only ``tf.xla.experimental`` (``jit_scope``, ``compile``)."""

from flowmesh.xla import experimental
