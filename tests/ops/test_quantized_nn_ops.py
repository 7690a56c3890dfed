"""tf.nn.quantized_max_pool / quantized_avg_pool / quantized_relu_x / quantized_conv2d against
TensorFlow: the raw quantized outputs and the output ranges, on tensors quantized in-graph."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_RNG = np.random.RandomState(5)
_X = _RNG.uniform(-1.0, 3.0, (2, 5, 4, 3)).astype(np.float32)
_F = _RNG.uniform(-0.5, 0.5, (2, 3, 3, 2)).astype(np.float32)


def _plain(value):
    value = np.asarray(value)
    return value.view(value.dtype[0]) if value.dtype.fields else value


def _q(t, x, low, high, dtype):
    return t.quantize(x, low, high, dtype)


CASES = [
    ("max_pool_same", lambda t: t.nn.quantized_max_pool(*_q(t, _X, -1.0, 3.0, t.quint8),
                                                        [1, 2, 2, 1], [1, 2, 2, 1], "SAME")),
    ("avg_pool_same", lambda t: t.nn.quantized_avg_pool(*_q(t, _X, -1.0, 3.0, t.quint8),
                                                        [1, 3, 2, 1], [1, 2, 2, 1], "SAME")),
    ("avg_pool_valid", lambda t: t.nn.quantized_avg_pool(*_q(t, _X, -1.0, 3.0, t.quint8),
                                                         [1, 2, 2, 1], [1, 1, 1, 1], "VALID")),
    ("conv2d_same", lambda t: _conv(t, "SAME", [1, 1, 1, 1])),
    ("conv2d_valid_s2", lambda t: _conv(t, "VALID", [1, 2, 2, 1])),
]


def _conv(t, padding, strides):
    x, lx, hx = _q(t, _X, -1.0, 3.0, t.quint8)
    f, lf, hf = _q(t, _F, -0.5, 0.5, t.quint8)
    return t.nn.quantized_conv2d(x, f, lx, hx, lf, hf, strides, padding)


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(name, build):
    tf1 = require_tensorflow()
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        with module.Graph().as_default(), module.Session(config=config) as sess:
            results.append(sess.run(list(build(module))))
    # TensorFlow's average pooling rounds the mean half to even with its default oneDNN kernel
    # and truncates it without (TF_ENABLE_ONEDNN_OPTS=0): flowmesh rounds, within 1 of either
    atol = 1 if name.startswith("avg_pool") else 0
    for ours, theirs in zip(*results):
        ours, theirs = _plain(ours), _plain(theirs)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        np.testing.assert_allclose(ours.astype(np.int64), theirs.astype(np.int64), rtol=0, atol=atol)


def test_avg_pool_rounds_the_mean_half_to_even():
    x = np.array([1.0, 2.0, 2.0, 3.0, 0.0, 1.0, 4.0, 5.0], np.float32).reshape(1, 2, 4, 1)
    with tf.Graph().as_default(), tf.Session() as sess:
        q, low, high = _q(tf, x, 0.0, 255.0, tf.quint8)
        raw, (out, _, _) = sess.run([q, tf.nn.quantized_avg_pool(q, low, high, [1, 2, 2, 1],
                                                                 [1, 2, 2, 1], "VALID")])
    sums = _plain(raw).astype(float).reshape(2, 2, 2).transpose(1, 0, 2).reshape(2, 4).sum(axis=1)
    np.testing.assert_array_equal(_plain(out).ravel(), np.round(sums / 4))


def test_relu_x_clamps_at_quantized_zero_and_max_value():
    """TensorFlow 2.21's CPU build has no QuantizedReluX kernel: checked against its formula
    (``FloatToQuantized``: steps / (range * steps / (steps - 1)), C's round)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        q, low, high = _q(tf, _X, -1.0, 3.0, tf.quint8)
        raw, (out, out_low, out_high) = sess.run([q, tf.nn.quantized_relu_x(q, 1.5, low, high)])
    scale = 256.0 / (4.0 * 256.0 / 255.0)

    def quantized(v):
        return int(np.floor(v * scale + 0.5) - np.floor(-1.0 * scale + 0.5))

    expected = np.clip(_plain(raw).astype(int), quantized(0.0), quantized(1.5))
    np.testing.assert_array_equal(_plain(out), expected)
    assert (out_low, out_high) == (-1.0, 3.0)


def test_needs_quantized_input():
    with pytest.raises(TypeError, match="quantized dtype"):
        tf.nn.quantized_max_pool(_X, -1.0, 3.0, 2, 2, "SAME")
