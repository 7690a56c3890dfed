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
from flowmesh.ops.fftnd_ops import fftnd, ifftnd, irfftnd, rfftnd
from flowmesh.ops.mdct_ops import inverse_mdct, kaiser_bessel_derived_window, kaiser_window, mdct
from flowmesh.ops.spectral_ops import (
    dct,
    frame,
    idct,
    inverse_stft,
    inverse_stft_window_fn,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
    overlap_and_add,
    stft,
    vorbis_window,
)
