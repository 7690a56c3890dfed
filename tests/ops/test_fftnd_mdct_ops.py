"""N-D FFTs over chosen axes (against NumPy: TensorFlow's CPU build has no FFTND kernel),
the MDCT and its inverse, and the Kaiser windows (values and gradients against TensorFlow)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

RNG = np.random.default_rng(3)
Z = (RNG.normal(size=(2, 3, 4)) + 1j * RNG.normal(size=(2, 3, 4))).astype(np.complex64)
R = RNG.normal(size=(2, 3, 4))

FFTND = [  # (flowmesh call, NumPy reference)
    (lambda: tf.signal.fftnd(Z), lambda: np.fft.fftn(Z)),
    (lambda: tf.fftnd(Z, fft_length=[5, 2], axes=[0, 2]), lambda: np.fft.fftn(Z, s=[5, 2], axes=[0, 2])),
    (lambda: tf.signal.ifftnd(Z, axes=[-1, 1], norm="ortho"), lambda: np.fft.ifftn(Z, axes=[-1, 1], norm="ortho")),
    (lambda: tf.signal.ifftnd(Z, fft_length=[3], axes=[2], norm="forward"),
     lambda: np.fft.ifftn(Z, s=[3], axes=[2], norm="forward")),
    (lambda: tf.signal.rfftnd(R, fft_length=[3, 6], axes=[1, 2], norm="forward"),
     lambda: np.fft.rfftn(R, s=[3, 6], axes=[1, 2], norm="forward")),
    (lambda: tf.signal.rfftnd(R.astype(np.float32)), lambda: np.fft.rfftn(R)),
    (lambda: tf.rfftnd(R, [2, 3, 4], [0, 1, 2], Tcomplex=tf.complex128), lambda: np.fft.rfftn(R)),
    (lambda: tf.ifftnd(Z, [2, 3], [1, 2]), lambda: np.fft.ifftn(Z, s=[2, 3], axes=[1, 2])),
    (lambda: tf.signal.irfftnd(Z), lambda: np.fft.irfftn(Z)),
    (lambda: tf.irfftnd(Z, fft_length=[4], axes=[1]), lambda: np.fft.irfftn(Z, s=[4], axes=[1])),
]


@pytest.mark.parametrize("case", range(len(FFTND)))
def test_fftnd_family_matches_numpy(case):
    build, reference = FFTND[case]
    expected = reference()
    with tf.Graph().as_default(), tf.Session() as sess:
        out = build()
        value = sess.run(out)
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


def test_fftnd_errors_name_the_problem():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="rfftnd needs a float32 or float64"):
            tf.signal.rfftnd(Z)
        with pytest.raises(ValueError, match="fft_length .* and axes"):
            tf.signal.fftnd(Z, fft_length=[2], axes=[0, 1])
        with pytest.raises(TypeError, match="cast the input first"):
            tf.rfftnd(R, [2], [0], Tcomplex=tf.complex64)


SIGNAL = Input((2, 32))
SPECS = [
    OpSpec("mdct", lambda tf, x: tf.signal.mdct(x, 8), (SIGNAL,)),
    OpSpec("mdct/no_window_ortho_pad", lambda tf, x: tf.signal.mdct(x, 12, window_fn=None, norm="ortho", pad_end=True),
           (Input((2, 30)),), dynamic=False),
    OpSpec("inverse_mdct/round_trip", lambda tf, x: tf.signal.inverse_mdct(tf.signal.mdct(x, 8)), (SIGNAL,)),
    OpSpec("inverse_mdct/kbd_ortho",
           lambda tf, x: tf.signal.inverse_mdct(
               tf.signal.mdct(x, 8, window_fn=tf.signal.kaiser_bessel_derived_window, norm="ortho"),
               window_fn=tf.signal.kaiser_bessel_derived_window, norm="ortho"), (SIGNAL,)),
    OpSpec("kaiser_window", lambda tf, x: tf.signal.kaiser_window(11, beta=4.0, dtype=x.dtype) * x, (Input((11,)),)),
    OpSpec("kaiser_window/default_beta", lambda tf, x: tf.signal.kaiser_window(6, dtype=x.dtype) * x, (Input((6,)),)),
    OpSpec("kaiser_bessel_derived_window", lambda tf, x: tf.signal.kaiser_bessel_derived_window(10, 3.0, x.dtype) * x,
           (Input((10,)),)),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_mdct_and_windows(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_mdct_and_windows_match_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_inverse_mdct_reconstructs_the_interior():
    x = RNG.normal(size=(1, 64)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        back = sess.run(tf.signal.inverse_mdct(tf.signal.mdct(x, 16)))
    np.testing.assert_allclose(back[:, 8:-8], x[:, 8:-8], atol=1e-5)
