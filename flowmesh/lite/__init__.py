"""``tf.lite``: TensorFlow Lite's converter and interpreter are not supported (a separate
runtime); ``tf.lite.constants`` (the dtype and format constants converter scripts name)
exists."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "lite")


__all__ = ["Interpreter", "OpHint", "OpsSet", "Optimize", "RepresentativeDataset", "TFLiteConverter", "TargetSpec",
           "TocoConverter", "constants", "experimental", "toco_convert"]
