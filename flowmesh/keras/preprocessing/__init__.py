# ruff: noqa: F401 - re-exports
"""``tf.keras.preprocessing``: ``sequence``, ``text``, ``image`` utilities and the
``*_dataset_from_*`` functions."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras.preprocessing")
