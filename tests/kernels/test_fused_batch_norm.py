"""Fused batch norm's kernels (torch's ``native_batch_norm`` forward and backward) against
TensorFlow's ``FusedBatchNormV3``/``FusedBatchNormGradV3``, at sizes where torch's
vectorized channels-last code runs (the op table in ``tests/ops/test_nn_norm_ops.py``
checks tiny inputs against finite differences), and training steps of ``tf.layers`` and
Keras batch normalization against TensorFlow's.

Tolerances follow what is compared: float32 statistics over ``n`` elements differ by
rounding of ``n``-term sums, so outputs and gradients are compared relative to their
largest magnitude; float16 by float16's precision.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

CHANNELS = 19  # not a multiple of any vector width: the kernels' tails run too
SHAPES = {"NHWC": (4, 5, 6, CHANNELS), "NCHW": (4, CHANNELS, 5, 6), "NDHWC": (2, 3, 4, 5, CHANNELS),
          "NCDHW": (2, CHANNELS, 3, 4, 5)}
TOLERANCE = {"float32": 2e-5, "float16": 4e-3}


def _inputs(shape: tuple[int, ...], dtype: str, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": (rng.standard_normal(shape) * 2.0 + 0.5).astype(dtype),
        "dy": rng.standard_normal(shape).astype(dtype),
        "scale": rng.uniform(0.5, 1.5, CHANNELS).astype(np.float32),
        "offset": rng.standard_normal(CHANNELS).astype(np.float32),
        "mean": rng.standard_normal(CHANNELS).astype(np.float32),
        "variance": rng.uniform(0.5, 2.0, CHANNELS).astype(np.float32),
    }


def _run(tf, values: dict[str, np.ndarray], fmt: str, training: bool, factor: float,
         config=None) -> list[np.ndarray]:
    """y, batch mean, batch variance, the two reserve spaces (training) and d/dx, d/dscale,
    d/doffset of ``sum(y * dy)``."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(values["x"].dtype, values["x"].shape)
        scale, offset = tf.constant(values["scale"]), tf.constant(values["offset"])
        stats = {} if training and factor == 1.0 else {"mean": values["mean"], "variance": values["variance"]}
        y, mean, var = tf.nn.fused_batch_norm(x, scale, offset, epsilon=0.01, data_format=fmt,
                                              is_training=training, exponential_avg_factor=factor,
                                              **stats)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * tf.cast(tf.constant(values["dy"]), tf.float32))
        fetches = [y, mean, var] + (list(y.op.outputs[3:5]) if training else [])
        fetches += tf.gradients(loss, [x, scale, offset])
        with tf.Session(graph=graph, config=config) as sess:
            return sess.run(fetches, {x: values["x"]})


def _assert_close(ours: list[np.ndarray], theirs: list[np.ndarray], dtype: str, what: str) -> None:
    tol = TOLERANCE[dtype]
    names = ["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"][:len(ours) - 3]
    for name, a, b in zip(names + ["dx", "dscale", "doffset"], ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape, (what, name, a.dtype, b.dtype, a.shape, b.shape)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        bound = tol * max(1.0, float(np.abs(b64).max()))
        np.testing.assert_allclose(a64, b64, rtol=tol, atol=bound, err_msg=f"{what}: {name}")


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", sorted(SHAPES))
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_fused_batch_norm_matches_tensorflow(fmt, training):
    tf1 = require_tensorflow()
    values = _inputs(SHAPES[fmt], "float32")
    theirs = _run(tf1, values, fmt, training, 1.0, session_config(tf1))
    _assert_close(_run(fm, values, fmt, training, 1.0), theirs, "float32", f"{fmt} training={training}")


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_float16_and_running_average_match_tensorflow(fmt):
    tf1 = require_tensorflow()
    half = _inputs(SHAPES[fmt], "float16", seed=1)
    _assert_close(_run(fm, half, fmt, True, 1.0), _run(tf1, half, fmt, True, 1.0, session_config(tf1)),
                  "float16", f"{fmt} float16")
    values = _inputs(SHAPES[fmt], "float32", seed=2)
    _assert_close(_run(fm, values, fmt, True, 0.3), _run(tf1, values, fmt, True, 0.3, session_config(tf1)),
                  "float32", f"{fmt} exponential_avg_factor=0.3")


@pytest.mark.oracle
def test_one_element_per_channel_matches_tensorflow():
    """n = 1: TensorFlow's unbiased variance is the biased one (0), not 0/0."""
    tf1 = require_tensorflow()
    values = _inputs((1, 1, 1, CHANNELS), "float32")
    _assert_close(_run(fm, values, "NHWC", True, 1.0),
                  _run(tf1, values, "NHWC", True, 1.0, session_config(tf1)), "float32", "n=1")


def test_reserve_spaces_and_layouts():
    """Reserve spaces as TensorFlow's CPU kernel defines them, results contiguous in the
    input's format, and the gradient op's own kernel (no elementwise rebuild) in the step."""
    values = _inputs(SHAPES["NHWC"], "float32")
    with fm.Graph().as_default() as graph:
        x = fm.constant(values["x"])
        y, mean, var = fm.nn.fused_batch_norm(x, values["scale"], values["offset"], epsilon=0.01)
        dx = fm.gradients(fm.reduce_sum(y * values["dy"]), x)[0]
        assert y.op.outputs[5].shape.rank is None
        types = {op.type for op in graph.get_operations()}
        assert "FusedBatchNormGradV3" in types and "Rsqrt" not in types
        with fm.Session() as sess:
            r1, r2, r3, y_value, dx_value, m, v = sess.run(list(y.op.outputs[3:6]) + [y, dx, mean, var])
    x64 = values["x"].astype(np.float64)
    np.testing.assert_allclose([r1, m], [x64.mean((0, 1, 2))] * 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r2, x64.var((0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(v, x64.var((0, 1, 2), ddof=1), rtol=1e-5)
    assert r2.shape == (CHANNELS,) and r3.shape == () and r3 == 0
    assert y_value.flags["C_CONTIGUOUS"] and dx_value.flags["C_CONTIGUOUS"]


def _conv_bn_net(tf, layers, x, fmt_axis: int):
    h = layers.conv2d(x, 8, 3, padding="same", use_bias=False, name="conv")
    if fmt_axis == 1:
        h = tf.transpose(h, [0, 3, 1, 2])
    h = tf.nn.relu(layers.batch_normalization(h, axis=fmt_axis, training=True, momentum=0.9, name="bn"))
    if fmt_axis == 1:
        h = tf.transpose(h, [0, 2, 3, 1])
    h = layers.conv2d(h, 4, 3, strides=2, padding="same", use_bias=False, name="conv2")
    h = layers.batch_normalization(h, training=True, name="bn2")
    return tf.reduce_mean(tf.square(h - 0.3))


def _train(tf, layers, fmt_axis: int, data: list[np.ndarray], initial, config=None) -> tuple[dict, dict, set]:
    """Initial and final variables after a momentum step per batch, and the graph's op types."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 6, 6, 3])
        loss = _conv_bn_net(tf, layers, x, fmt_axis)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        variables = tf.global_variables()
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for v in variables if initial is not None else ():
                v.load(initial[v.name], sess)
            start = {v.name: sess.run(v) for v in variables}
            for batch in data:
                sess.run(train, {x: batch})
            return start, {v.name: sess.run(v) for v in variables}, {op.type for op in graph.get_operations()}


@pytest.mark.oracle
@pytest.mark.parametrize("fmt_axis", [3, 1], ids=["NHWC", "NCHW"])
def test_tf_layers_training_matches_tensorflow(fmt_axis):
    """Three momentum steps of conv + fused batch norm: every variable, moving statistics
    included, ends where TensorFlow's does."""
    from flowmesh.testing.keras_oracle import require_tf_layers

    tf1, tf_layers = require_tf_layers()
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((5, 6, 6, 3)).astype(np.float32) * 1.5 + 0.2 for _ in range(3)]
    initial, theirs, their_types = _train(tf1, tf_layers, fmt_axis, data, None, session_config(tf1))
    _, ours, our_types = _train(fm, fm.layers, fmt_axis, data, initial)
    assert "FusedBatchNormV3" in their_types and "FusedBatchNormGradV3" in our_types
    assert sorted(ours) == sorted(theirs)
    for name, value in theirs.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(value).max()),
                                   err_msg=name)
        if "moving" in name:
            assert not np.allclose(value, initial[name])


@pytest.mark.parametrize("shape, axis, fused", [
    ((2, 4, 4, 3), -1, True), ((2, 3, 4, 4), 1, True), ((2, 2, 3, 4, 3), -1, True),
    ((2, 3, 2, 3, 4), 1, True), ((2, 4, 3), -1, False), ((2, 4, 4, 3), 2, False)])
def test_layers_fuse_where_tensorflow_does(shape, axis, fused):
    for build in (lambda x: fm.layers.batch_normalization(x, axis=axis, training=True),
                  lambda x: fm.keras.layers.BatchNormalization(axis=axis)(x, training=True)):
        with fm.Graph().as_default() as graph:
            build(fm.placeholder(fm.float32, shape))
            assert ("FusedBatchNormV3" in {op.type for op in graph.get_operations()}) == fused


def test_fused_true_where_it_cannot_fuse():
    """Keras raises, ``tf.layers`` (TensorFlow 1.x's default fused=True) falls back."""
    with fm.Graph().as_default():
        x = fm.placeholder(fm.float32, [2, 3])
        fm.layers.batch_normalization(x, fused=True, training=True)
        with pytest.raises(ValueError, match="fused=True"):
            fm.keras.layers.BatchNormalization(fused=True)(x)
