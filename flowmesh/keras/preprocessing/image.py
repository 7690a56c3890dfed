# ruff: noqa: F401 - re-exports
"""``tf.keras.preprocessing.image``: image files and arrays, random augmentation,
``ImageDataGenerator`` (``flow``, ``flow_from_directory``) and its iterators."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras.preprocessing.image")
