# ruff: noqa: F401 - re-exports
"""``tf.keras.applications``: tf-keras's image models, with ``weights=None`` (random), a
weight file, or ``"imagenet"`` read from the Keras cache."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras.applications")
