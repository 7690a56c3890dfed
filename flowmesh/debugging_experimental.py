# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.debugging.experimental``: dumping op outputs for later debugging."""

from flowmesh.debug_dump import disable_dump_debug_info, enable_dump_debug_info
