"""tf.signal framing, STFT, DCT, mel filters, MFCCs and windows: the oracle table (values vs
NumPy, gradients vs finite differences and TensorFlow)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

SIG = Input((2, 16))


def _parts(tf, z):
    return [tf.real(z), tf.imag(z)]


def _np_dct2(x):
    n = x.shape[-1]
    k, i = np.arange(n)[None, :], np.arange(n)[:, None]
    return x @ (2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n)))


SPECS = [
    OpSpec("frame", lambda tf, x: tf.signal.frame(x, 5, 3), (SIG,),
           reference=lambda x: np.stack([x[:, s:s + 5] for s in range(0, 12, 3)], 1)),
    OpSpec("frame/pad_end", lambda tf, x: tf.signal.frame(x, 5, 4, pad_end=True, pad_value=1.0), (SIG,)),
    OpSpec("overlap_and_add", lambda tf, x: tf.signal.overlap_and_add(x, 2), (Input((2, 4, 5)),)),
    OpSpec("stft", lambda tf, x: _parts(tf, tf.signal.stft(x, 8, 4)), (SIG,)),
    OpSpec("stft/fft16_pad_end", lambda tf, x: _parts(tf, tf.signal.stft(x, 6, 3, fft_length=16, pad_end=True)),
           (SIG,)),
    OpSpec("inverse_stft", lambda tf, a, b: tf.signal.inverse_stft(
        tf.complex(a, b), 8, 4, window_fn=tf.signal.inverse_stft_window_fn(4)), (Input((2, 3, 5)), Input((2, 3, 5)))),
    OpSpec("dct2", lambda tf, x: tf.signal.dct(x), (Input((3, 6)),), reference=_np_dct2),
    OpSpec("dct2/ortho", lambda tf, x: tf.signal.dct(x, norm="ortho"), (Input((3, 6)),)),
    OpSpec("dct1", lambda tf, x: tf.signal.dct(x, type=1), (Input((3, 6)),)),
    OpSpec("dct3/ortho", lambda tf, x: tf.signal.dct(x, type=3, norm="ortho"), (Input((3, 6)),)),
    OpSpec("dct4/n8", lambda tf, x: tf.signal.dct(x, type=4, n=8), (Input((3, 6)),)),
    OpSpec("idct/ortho", lambda tf, x: tf.signal.idct(x, norm="ortho"), (Input((3, 6)),)),
    OpSpec("mfccs", lambda tf, x: tf.signal.mfccs_from_log_mel_spectrograms(x), (Input((2, 3, 8)),)),
]
SPECS = [dataclasses.replace(s, dynamic=False) if s.name.startswith(("stft", "inverse_stft", "dct", "idct", "mfcc"))
         else s for s in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_spectral(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_spectral_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


@pytest.mark.parametrize("build", [
    lambda lib: lib.signal.linear_to_mel_weight_matrix(10, 33, 16000, 100.0, 7000.0),
    lambda lib: lib.signal.vorbis_window(10),
    lambda lib: lib.signal.inverse_stft_window_fn(3)(8, lib.float32),
], ids=["mel_matrix", "vorbis", "inverse_window"])
def test_constants_match_tensorflow(build):
    import flowmesh as tf

    tf1 = require_tensorflow()
    values = []
    for lib in (tf, tf1):
        with lib.Graph().as_default(), lib.Session() as sess:
            values.append(sess.run(build(lib)))
    np.testing.assert_allclose(values[0], values[1], rtol=1e-5, atol=1e-6)


def test_dct_keeps_the_static_shape_of_a_partly_known_input() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 8])
        assert tf.signal.dct(x).shape.as_list() == [None, 3, 8]
        assert tf.signal.dct(x, n=4).shape.as_list() == [None, 3, 4]
        assert tf.signal.idct(x, n=10).shape.as_list() == [None, 3, 10]
