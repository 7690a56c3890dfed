"""``tf.lite``: TensorFlow Lite's converter and interpreter are not supported (a separate
runtime); ``tf.lite.constants`` (the dtype and format constants converter scripts name)
exists."""

from __future__ import annotations

from flowmesh.lite import constants, experimental
from flowmesh.unsupported import LITE, unsupported

Interpreter = unsupported("lite.Interpreter", LITE)
OpHint = unsupported("lite.OpHint", LITE)
OpsSet = unsupported("lite.OpsSet", LITE)
Optimize = unsupported("lite.Optimize", LITE)
RepresentativeDataset = unsupported("lite.RepresentativeDataset", LITE)
TFLiteConverter = unsupported("lite.TFLiteConverter", LITE)
TargetSpec = unsupported("lite.TargetSpec", LITE)
TocoConverter = unsupported("lite.TocoConverter", LITE)
toco_convert = unsupported("lite.toco_convert", LITE)

__all__ = ["Interpreter", "OpHint", "OpsSet", "Optimize", "RepresentativeDataset", "TFLiteConverter", "TargetSpec",
           "TocoConverter", "constants", "experimental", "toco_convert"]
