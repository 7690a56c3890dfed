"""``tf.lite.experimental.authoring``: not supported (TensorFlow Lite is a separate runtime)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "lite.experimental.authoring")

