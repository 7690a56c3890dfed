"""``tf.lite.experimental``: not supported (TensorFlow Lite is a separate runtime)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "lite.experimental")


__all__ = ["Analyzer", "OpResolverType", "QuantizationDebugOptions", "QuantizationDebugger", "authoring",
           "convert_op_hints_to_stubs", "load_delegate"]
