"""``tf.math.special``: Bessel functions and the special integrals (Dawson, Ei, Fresnel,
Spence)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "math.special")
