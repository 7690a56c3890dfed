# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.quantization``: fake quantization (quantization-aware training) and the
quantize/dequantize ops, as at the top level."""

from flowmesh import quantization_experimental as experimental
from flowmesh.ops.fake_quant_ops import (
    fake_quant_with_min_max_args,
    fake_quant_with_min_max_args_gradient,
    fake_quant_with_min_max_vars,
    fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel,
    fake_quant_with_min_max_vars_per_channel_gradient,
)
from flowmesh.ops.quantize_dequantize_ops import quantize_and_dequantize, quantize_and_dequantize_v2
from flowmesh.ops.quantize_ops import dequantize, quantize, quantized_concat
