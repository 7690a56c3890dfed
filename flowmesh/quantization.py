"""``tf.quantization``: fake quantization (quantization-aware training) and the
quantize/dequantize ops, as at the top level."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "quantization")
