# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.experimental`` (``tf.compat.v1.experimental``): the low-precision dtypes."""

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
