# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.spectral``: TensorFlow 1.x's name for the Fourier and cosine transforms of
``tf.signal``."""

from flowmesh.ops.fft_ops import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from flowmesh.ops.spectral_ops import dct, idct
