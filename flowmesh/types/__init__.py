# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.types``: only ``tf.types.experimental`` in TensorFlow 1.x's API."""

from flowmesh.types import experimental
