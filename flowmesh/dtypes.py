# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.dtypes``: the dtype objects, ``as_dtype``, ``cast`` and ``saturate_cast``.

The quantized dtypes (``qint8 quint8 qint16 quint16 qint32``, ``QUANTIZED_DTYPES``) are
held as integers of the same width; ``tf.quantize``/``tf.dequantize`` convert to and from
float."""

from flowmesh import dtypes_experimental as experimental  # noqa: E402 - tf.dtypes.experimental
from flowmesh.core.dtypes import (
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from flowmesh.ops.cast_ops import cast, saturate_cast
from flowmesh.ops.complex_ops import complex
from flowmesh.ops.string_ops import as_string
