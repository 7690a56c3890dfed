"""``tf.lite.experimental``: not supported (TensorFlow Lite is a separate runtime)."""

from __future__ import annotations

from flowmesh.lite.experimental import authoring
from flowmesh.unsupported import LITE, unsupported

Analyzer = unsupported("lite.experimental.Analyzer", LITE)
OpResolverType = unsupported("lite.experimental.OpResolverType", LITE)
QuantizationDebugOptions = unsupported("lite.experimental.QuantizationDebugOptions", LITE)
QuantizationDebugger = unsupported("lite.experimental.QuantizationDebugger", LITE)
convert_op_hints_to_stubs = unsupported("lite.experimental.convert_op_hints_to_stubs", LITE)
load_delegate = unsupported("lite.experimental.load_delegate", LITE)

__all__ = ["Analyzer", "OpResolverType", "QuantizationDebugOptions", "QuantizationDebugger", "authoring",
           "convert_op_hints_to_stubs", "load_delegate"]
