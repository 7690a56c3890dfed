"""Quantized dtypes, quantize/dequantize/quantized_concat and fake_quant_* (values and
gradients), each compared with TensorFlow bit for bit on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(7)
X = RNG.uniform(-3.0, 5.0, (4, 6)).astype(np.float32)
X[0, :3] = [0.0, -3.0, 5.0]
G = RNG.uniform(-1.0, 1.0, X.shape).astype(np.float32)


def _plain(value):
    value = np.asarray(value)
    return value.view(value.dtype[0]) if value.dtype.fields else value


def _run(lib, build, config=None):
    with lib.Graph().as_default() as g:
        x = lib.placeholder(lib.float32, X.shape)
        fetches = build(lib, x)
        with lib.Session(graph=g, config=config) as sess:
            return [_plain(v) for v in sess.run(fetches, {x: X})]


def _roundtrip(mode, T, lo, hi, **kwargs):
    def build(t, x):
        q, qmin, qmax = t.quantize(x, lo, hi, getattr(t, T), mode=mode, **kwargs)
        back = t.dequantize(q, qmin, qmax, mode=mode, narrow_range=kwargs.get("narrow_range", False))
        return [q, qmin, qmax, back]
    return build


# quint8 MIN_FIRST is left out: TensorFlow's result depends on its build (oneDNN's kernel
# rounds differently from its reference Eigen kernel, which flowmesh follows).
QUANTIZE = {
    f"{mode}/{T}/{lo},{hi}{'/narrow' if narrow else ''}{'/even' if even else ''}":
        _roundtrip(mode, T, lo, hi, narrow_range=narrow,
                   **({"round_mode": "HALF_TO_EVEN"} if even else {}))
    for mode, T, lo, hi, narrow, even in [
        ("MIN_COMBINED", "qint8", -3.0, 5.0, False, False), ("MIN_COMBINED", "quint8", -1.0, 4.0, False, False),
        ("MIN_COMBINED", "qint16", -3.0, 5.0, False, False), ("MIN_COMBINED", "quint16", 0.5, 6.0, False, False),
        ("MIN_FIRST", "quint16", -3.0, 5.0, False, False), ("MIN_FIRST", "qint8", -2.0, 2.0, False, False),
        ("MIN_FIRST", "qint32", -3.0, 5.0, False, False),
        ("SCALED", "qint8", -3.0, 5.0, False, False), ("SCALED", "qint8", -3.0, 5.0, True, True),
        ("SCALED", "quint8", 0.0, 4.0, False, False), ("SCALED", "qint16", -4.0, 1.0, False, True),
    ]
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(QUANTIZE))
def test_quantize_dequantize_match_tensorflow(name):
    tf1 = require_tensorflow()
    ours, theirs = _run(tf, QUANTIZE[name]), _run(tf1, QUANTIZE[name], session_config(tf1))
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1:3], theirs[1:3], rtol=1e-7)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6, atol=1e-6)


def _concat(t, x):
    a, amin, amax = t.quantize(x[:2], -3.0, 5.0, t.quint8, mode="MIN_COMBINED")
    b, bmin, bmax = t.quantize(x[2:], -1.0, 2.0, t.quint8, mode="MIN_COMBINED")
    c, cmin, cmax = t.quantize(x[:2] * 0.5, -6.0, 1.0, t.quint8, mode="MIN_COMBINED")
    d, dmin, dmax = t.quantize(x[2:], 0.0, 9.0, t.quint8, mode="MIN_COMBINED")
    return [*t.quantized_concat(0, [a, b], [amin, bmin], [amax, bmax]),
            *t.quantized_concat(1, [c, d, c], [cmin, dmin, cmin], [cmax, dmax, cmax])]


@pytest.mark.oracle
def test_quantized_concat_matches_tensorflow():
    tf1 = require_tensorflow()
    ours, theirs = _run(tf, _concat), _run(tf1, _concat, session_config(tf1))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def _fake(t, x):
    lo, hi = t.constant(-2.5), t.constant(3.7)
    per_lo, per_hi = t.constant(np.linspace(-3.0, -0.5, 6, dtype=np.float32)), t.constant(np.linspace(0.5, 4.0, 6, dtype=np.float32))
    outs = [t.fake_quant_with_min_max_args(x, -2.5, 3.7), t.fake_quant_with_min_max_args(x, 0.3, 4.0, num_bits=4, narrow_range=True),
            t.fake_quant_with_min_max_vars(x, lo, hi, num_bits=6), t.fake_quant_with_min_max_vars_per_channel(x, per_lo, per_hi)]
    g = t.constant(G)
    grads = [t.fake_quant_with_min_max_args_gradient(g, x, -2.5, 3.7),
             *t.fake_quant_with_min_max_vars_gradient(g, x, lo, hi, narrow_range=True),
             *t.fake_quant_with_min_max_vars_per_channel_gradient(g, x, per_lo, per_hi, num_bits=5)]
    auto = t.gradients(t.reduce_sum(outs[2] * outs[3] + outs[0]), [x, lo, hi, per_lo, per_hi])
    return outs + grads + auto


@pytest.mark.oracle
def test_fake_quant_values_and_gradients_match_tensorflow():
    tf1 = require_tensorflow()
    ours, theirs = _run(tf, _fake), _run(tf1, _fake, session_config(tf1))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=str(i))


def test_quantized_dtypes_as_tensorflow():
    tf1 = require_tensorflow()
    for name in ("qint8", "quint8", "qint16", "quint16", "qint32"):
        ours, theirs = getattr(tf, name), getattr(tf1, name)
        assert (ours.as_datatype_enum, ours.size, ours.is_quantized, ours.is_integer) == \
            (theirs.as_datatype_enum, theirs.size, theirs.is_quantized, theirs.is_integer)
        assert ours.as_numpy_dtype == theirs.as_numpy_dtype and tf.as_dtype(theirs.as_numpy_dtype) is ours
        assert ours in tf.QUANTIZED_DTYPES and tf.dtypes.QUANTIZED_DTYPES is tf.QUANTIZED_DTYPES
    with tf.Graph().as_default(), tf.Session() as sess:
        value = sess.run(tf.constant([1, -2], dtype=tf.qint8))
        assert value.dtype == tf1.qint8.as_numpy_dtype and _plain(value).tolist() == [1, -2]


def test_quantize_errors_say_what_is_wrong():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="only supported for mode 'SCALED'"):
            tf.quantize(x, -1.0, 1.0, tf.qint8, round_mode="HALF_TO_EVEN")
        with pytest.raises(TypeError, match="quantized dtype"):
            tf.quantize(x, -1.0, 1.0, tf.int8)
        with pytest.raises(tf.errors.UnimplementedError, match="per tensor"):
            tf.quantize(x, [-1.0], [1.0], tf.qint8, axis=0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="min has to be smaller"):
            tf.fake_quant_with_min_max_args(x, 2.0, 1.0)
