# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.dtypes``: the dtype objects, ``as_dtype``, ``cast`` and ``saturate_cast``.

TensorFlow's quantized dtypes (``qint8`` ...) are not supported (stand-ins that raise)."""

from flowmesh.core.dtypes import (
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
from flowmesh.unsupported import QUANTIZED, unsupported

qint8 = unsupported("dtypes.qint8", QUANTIZED)
qint16 = unsupported("dtypes.qint16", QUANTIZED)
qint32 = unsupported("dtypes.qint32", QUANTIZED)
quint8 = unsupported("dtypes.quint8", QUANTIZED)
quint16 = unsupported("dtypes.quint16", QUANTIZED)
