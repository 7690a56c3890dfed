"""``tf.spectral``: TensorFlow 1.x's name for the Fourier and cosine transforms of
``tf.signal``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "spectral")
