"""tf.audio.decode_wav / encode_wav: 16-bit PCM WAV bytes and samples as TensorFlow's."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow

AUDIO = np.array([[0.0, 0.5], [-0.5, 1.0], [-1.0, 0.25], [0.99999, -0.00002], [2.0, -3.0],
                  [1.5 / 32768, -2.5 / 32768]], dtype=np.float32)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_round_trip_channels_samples_and_static_shapes():
    with tf.Graph().as_default():
        wav = tf.audio.encode_wav(AUDIO, 16000)
        decoded = tf.audio.decode_wav(wav)
        mono_padded = tf.audio.decode_wav(wav, desired_channels=1, desired_samples=8)
        more = tf.audio.decode_wav(wav, desired_channels=3, desired_samples=2)
        assert mono_padded.audio.shape.as_list() == [8, 1] and decoded.audio.shape.as_list() == [None, None]
        data, out, mono, wide = run((wav, decoded, mono_padded, more))
    assert data[:4] == b"RIFF" and data[8:16] == b"WAVEfmt " and len(data) == 44 + AUDIO.size * 2
    assert struct.unpack("<HHIIHH", data[20:36]) == (1, 2, 16000, 64000, 4, 16)
    expected = np.clip(np.round(AUDIO * 32768), -32768, 32767) / 32768
    np.testing.assert_allclose(out.audio, expected, atol=1 / 32768)
    assert out.sample_rate == 16000 and out.audio.dtype == np.float32
    np.testing.assert_array_equal(mono.audio[:6, 0], out.audio[:, 0])
    np.testing.assert_array_equal(mono.audio[6:], 0)
    np.testing.assert_array_equal(wide.audio, out.audio[:2][:, [0, 1, 1]])


def test_bad_files_are_named():
    with tf.Graph().as_default():
        contents = tf.placeholder(tf.string, [])
        decoded = tf.audio.decode_wav(contents)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Header mismatch: Expected RIFF"):
            run(decoded.audio, {contents: b"nope" * 20})
        eight_bit = bytearray(run(tf.audio.encode_wav(AUDIO, 8000)))
        eight_bit[34:36] = struct.pack("<H", 8)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Can only read 16-bit WAV files, but received 8"):
            run(decoded.audio, {contents: bytes(eight_bit)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="audio must be rank 2"):
            tf.audio.encode_wav(np.zeros(3, np.float32), 8000)
        with pytest.raises(tf.errors.InvalidArgumentError, match="desired_channels must be -1"):
            tf.audio.decode_wav(contents, desired_channels=-2)


@pytest.mark.oracle
def test_against_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs_wav = sess.run(tf1.audio.encode_wav(AUDIO, 22050))
        theirs = sess.run(tf1.audio.decode_wav(theirs_wav, desired_channels=3, desired_samples=9))
    with tf.Graph().as_default():
        ours_wav = run(tf.audio.encode_wav(AUDIO, 22050))
        ours = run(tf.audio.decode_wav(theirs_wav, desired_channels=3, desired_samples=9))
    assert ours_wav == theirs_wav
    np.testing.assert_array_equal(ours.audio, theirs.audio)
    assert ours.sample_rate == theirs.sample_rate
