"""``tf.lite.experimental.authoring``: not supported (TensorFlow Lite is a separate runtime)."""

from __future__ import annotations

from flowmesh.unsupported import LITE, unsupported

compatible = unsupported("lite.experimental.authoring.compatible", LITE)
