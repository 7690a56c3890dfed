# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.lookup.experimental``: the mutable tables."""

from flowmesh.lookup.mutable_tables import DenseHashTable, MutableHashTable
