# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.dtypes.experimental``: the low-precision dtypes (float8 and float4 formats, 2- and
4-bit integers), with ml_dtypes' NumPy types as in TensorFlow."""

from flowmesh.core.dtypes import (
    float4_e2m1fn,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    int2,
    int4,
    uint2,
    uint4,
)
