# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.math.special``: Bessel functions and the special integrals (Dawson, Ei, Fresnel,
Spence)."""

from flowmesh.ops.bessel_more_ops import (
    bessel_j0,
    bessel_j1,
    bessel_k0,
    bessel_k0e,
    bessel_k1,
    bessel_k1e,
    bessel_y0,
    bessel_y1,
)
from flowmesh.ops.bessel_ops import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e
from flowmesh.ops.special_integral_ops import dawsn, expint, fresnel_cos, fresnel_sin, spence
