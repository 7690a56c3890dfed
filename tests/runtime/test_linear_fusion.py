"""MatMul -> BiasAdd (-> Relu) runs as one oneDNN call: same values as float64 numpy within
float32 rounding, intermediates that are fetched stay unfused, bad bias shapes still fail."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels import onednn_matmul


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray, relu: bool) -> np.ndarray:
    y = x.astype(np.float64) @ w.astype(np.float64) + b
    return np.maximum(y, 0) if relu else y


@pytest.mark.parametrize("k", [784, 5])  # oneDNN, and the fallback inside the fused node
@pytest.mark.parametrize("fetch_intermediate", [False, True])
def test_dense_layers_match_float64(k, fetch_intermediate):
    rng = np.random.RandomState(k)
    x = rng.randn(32, k).astype(np.float32)
    w1, b1 = rng.randn(k, 96).astype(np.float32), rng.randn(96).astype(np.float32)
    w2, b2 = rng.randn(96, 10).astype(np.float32), rng.randn(10).astype(np.float32)
    with tf.Graph().as_default():
        px = tf.placeholder(tf.float32, [None, k])
        mm = tf.matmul(px, tf.constant(w1))
        h = tf.nn.relu(tf.nn.bias_add(mm, tf.constant(b1)))
        out = tf.nn.bias_add(tf.matmul(h, tf.constant(w2)), tf.constant(b2))
        with tf.Session() as sess:
            fetches = [h, out, mm] if fetch_intermediate else [h, out]
            got = sess.run(fetches, {px: x})
    want_h = _dense(x, w1, b1, True)
    want_out = _dense(want_h.astype(np.float32), w2, b2, False)
    np.testing.assert_allclose(got[0], want_h, rtol=1e-4, atol=1e-4 * np.abs(want_h).max())
    np.testing.assert_allclose(got[1], want_out, rtol=1e-4, atol=1e-4 * np.abs(want_out).max())
    if fetch_intermediate:
        np.testing.assert_allclose(got[2], x.astype(np.float64) @ w1, rtol=1e-4, atol=1e-3)


def test_program_fuses_dense_layer():
    if not onednn_matmul.available():
        pytest.skip("torch built without oneDNN")
    with tf.Graph().as_default():
        px, pw, pb = (tf.placeholder(tf.float32, s) for s in ([None, 128], [128, 64], [64]))
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(px, pw), pb))
        with tf.Session() as sess:
            meta = tf.RunMetadata()
            feed = {px: np.ones((4, 128), np.float32), pw: np.ones((128, 64), np.float32),
                    pb: np.zeros(64, np.float32)}
            value = sess.run(h, feed,
                             options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    np.testing.assert_array_equal(value, np.full((4, 64), 128.0, np.float32))
    names = [ns.node_name for dev in meta.step_stats.dev_stats for ns in dev.node_stats]
    assert any("fused:" in n and "BiasAdd" in n for n in names), names


def test_bad_bias_still_fails_clearly():
    with tf.Graph().as_default():
        px = tf.placeholder(tf.float32, [None, 128])
        pb = tf.placeholder(tf.float32, [None])
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(px, tf.ones([128, 64])), pb))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="as many biases"):
            sess.run(h, {px: np.ones((4, 128), np.float32), pb: np.ones(3, np.float32)})
