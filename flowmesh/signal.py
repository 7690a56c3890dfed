"""``tf.signal``: Fourier transforms, frequency shifts and windows."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "signal")
