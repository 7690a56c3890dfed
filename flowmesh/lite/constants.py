"""``tf.lite.constants``: the tensor types (TensorFlow dtypes) and output formats (toco's FileFormat numbers)
that TensorFlow Lite converter scripts name."""

from __future__ import annotations

from flowmesh.core import dtypes

FLOAT = dtypes.float32
FLOAT16 = dtypes.float16
INT8 = dtypes.int8
INT16 = dtypes.int16
INT32 = dtypes.int32
INT64 = dtypes.int64
STRING = dtypes.string
QUANTIZED_UINT8 = dtypes.uint8
TFLITE = 2  # toco FileFormat values, as TensorFlow has them
GRAPHVIZ_DOT = 3
