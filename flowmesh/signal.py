# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.signal``: Fourier transforms, frequency shifts and windows."""

from flowmesh.ops.fft_ops import (
    fft,
    fft2d,
    fft3d,
    fftshift,
    hamming_window,
    hann_window,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
