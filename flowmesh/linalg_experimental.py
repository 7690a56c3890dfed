# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.linalg.experimental``."""

from flowmesh.ops.linalg_conjugate_gradient import conjugate_gradient
