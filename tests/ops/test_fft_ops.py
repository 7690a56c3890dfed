"""Complex parts and Fourier transforms: the oracle table (real inputs combined into complex
values; values vs NumPy, gradients vs finite differences and TensorFlow)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

V = Input((2, 8))
G = Input((2, 4, 6))


def _c(tf, re, im):
    return tf.complex(re, im)


def _parts(tf, z):
    return [tf.real(z), tf.imag(z)]


SPECS = [
    OpSpec("complex/real_imag", lambda tf, a, b: _parts(tf, tf.complex(a, b) * tf.complex(b, a)), (V, V),
           reference=lambda a, b: [np.real((a + 1j * b) * (b + 1j * a)), np.imag((a + 1j * b) * (b + 1j * a))]),
    OpSpec("conj", lambda tf, a, b: _parts(tf, tf.conj(_c(tf, a, b)) * _c(tf, b, a)), (V, V)),
    OpSpec("complex_abs", lambda tf, a, b: tf.abs(_c(tf, a, b)), (V, V), reference=lambda a, b: np.abs(a + 1j * b)),
    OpSpec("angle", lambda tf, a, b: tf.angle(_c(tf, a, b)), (Input((2, 8), kind="nonzero", low=0.3), V),
           reference=lambda a, b: np.angle(a + 1j * b)),
    OpSpec("fft", lambda tf, a, b: _parts(tf, tf.signal.fft(_c(tf, a, b))), (V, V),
           reference=lambda a, b: [np.fft.fft(a + 1j * b).real, np.fft.fft(a + 1j * b).imag]),
    OpSpec("ifft", lambda tf, a, b: _parts(tf, tf.ifft(_c(tf, a, b))), (V, V)),
    OpSpec("fft2d", lambda tf, a, b: _parts(tf, tf.signal.fft2d(_c(tf, a, b))), (G, G)),
    OpSpec("ifft3d", lambda tf, a, b: _parts(tf, tf.signal.ifft3d(_c(tf, a, b))), (G, G)),
    OpSpec("rfft", lambda tf, x: _parts(tf, tf.signal.rfft(x)), (V,),
           reference=lambda x: [np.fft.rfft(x).real, np.fft.rfft(x).imag]),
    OpSpec("rfft/fft_length_pad", lambda tf, x: _parts(tf, tf.signal.rfft(x, [11])), (V,),
           reference=lambda x: [np.fft.rfft(x, 11).real, np.fft.rfft(x, 11).imag]),
    OpSpec("irfft", lambda tf, a, b: tf.signal.irfft(_c(tf, a, b)), (Input((2, 5)), Input((2, 5)))),
    OpSpec("irfft/odd_length", lambda tf, a, b: tf.signal.irfft(_c(tf, a, b), [7]), (Input((2, 4)), Input((2, 4)))),
    OpSpec("rfft2d", lambda tf, x: _parts(tf, tf.signal.rfft2d(x)), (G,),
           reference=lambda x: [np.fft.rfft2(x).real, np.fft.rfft2(x).imag]),
    OpSpec("irfft2d", lambda tf, a, b: tf.signal.irfft2d(_c(tf, a, b), [4, 6]), (Input((2, 4, 4)), Input((2, 4, 4)))),
    OpSpec("fftshift", lambda tf, x: tf.signal.fftshift(x), (Input((3, 5)),), reference=np.fft.fftshift),
    OpSpec("ifftshift/axis", lambda tf, x: tf.signal.ifftshift(x, axes=1), (Input((3, 5)),),
           reference=lambda x: np.fft.ifftshift(x, axes=1)),
]

# rfft/irfft read their transform lengths statically (as fft_length or from the shape).
SPECS = [dataclasses.replace(s, dynamic=False) if "rfft" in s.name else s for s in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_fft(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_fft_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


@pytest.mark.parametrize("name", ["hann_window", "hamming_window"])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_tensorflow(name, periodic):
    import flowmesh as tf

    tf1 = require_tensorflow()
    values = []
    for lib in (tf, tf1):
        with lib.Graph().as_default(), lib.Session() as sess:
            values.append(sess.run(getattr(lib.signal, name)(9, periodic=periodic)))
    np.testing.assert_allclose(values[0], values[1], rtol=1e-6, atol=1e-7)
