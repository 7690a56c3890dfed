# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.experimental.extension_type``."""

from flowmesh.ops.extension_type import as_dict
