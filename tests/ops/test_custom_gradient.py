"""tf.custom_gradient, recompute_grad, grad_pass_through and the graph-mode GradientTape,
each case built and run by flowmesh and by TensorFlow (graph mode) on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

X = np.array([0.5, -1.5, 2.0], np.float32)


def _values(lib, build, config=None):
    with lib.Graph().as_default() as g:
        x = lib.placeholder(lib.float32, [3])
        fetches = build(lib, x)
        with lib.Session(graph=g, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            present = [f for f in fetches if f is not None]
            values = iter(sess.run(present, {x: X}))
    return [None if f is None else np.asarray(next(values)) for f in fetches]


def _log1pexp(t, x):
    @t.custom_gradient
    def f(v):
        e = t.exp(v)

        def grad(dy):
            return dy * (1.0 - 1.0 / (1.0 + e))

        return t.math.log(1.0 + e), grad

    y = f(x)
    return [y, t.gradients(t.reduce_sum(y * y), x)[0]]


def _two_outputs(t, x):
    @t.custom_gradient
    def f(a, b):
        def grad(da, db):
            return da * 3.0 + db, -db
        return (a * b, a + b), grad

    p, s = f(x, 2.0 * x)
    return [p, s, *t.gradients(t.reduce_sum(p) + 2.0 * t.reduce_sum(s), [x])]


def _with_variables(t, x):
    w = t.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")

    @t.custom_gradient
    def f(v):
        def grad(dy, variables=None):
            return dy * 2.0, [dy * 100.0 for _ in variables]
        return v * w, grad

    y = f(x)
    return t.gradients(t.reduce_sum(y), [x, w])


def _recompute(t, x):
    with t.variable_scope("block"):
        f = t.recompute_grad(lambda v: t.sin(v) * t.exp(v))
        y = f(x)
    return [y, t.gradients(t.reduce_sum(y * y), x)[0]]


def _pass_through(t, x):
    y = t.grad_pass_through(lambda v: t.round(v * 3.0))(x)
    return [y, t.gradients(t.reduce_sum(y * x), x)[0]]


def _tape_basic(t, x):
    w = t.Variable(np.array([2.0, 1.0, 0.5], np.float32))
    outside = x * 10.0
    with t.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = t.reduce_sum(w * x * x) + t.reduce_sum(outside)
    gx, gw = tape.gradient(y, [x, w])
    return [gx, gw, tape.gradient(y, outside)]


def _tape_stop_and_unwatched(t, x):
    with t.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = x * x
        with tape.stop_recording():
            b = a * 5.0
        c = t.reduce_sum(a + b)
    with t.GradientTape() as other:
        d = t.reduce_sum(x * 3.0)
    return [tape.gradient(c, x), other.gradient(d, x, unconnected_gradients=t.UnconnectedGradients.ZERO)]


def _tape_jacobians(t, x):
    m = t.reshape(t.concat([x, x * 2.0], 0), [2, 3])
    with t.GradientTape(persistent=True) as tape:
        tape.watch([x, m])
        y = t.sin(x) * x[0]
        z = m * m
    return [tape.jacobian(y, x), tape.batch_jacobian(z, m), tape.gradient(y, x, output_gradients=x)]


CASES = {"custom_gradient": _log1pexp, "custom_gradient/two_outputs": _two_outputs,
         "custom_gradient/variables": _with_variables, "recompute_grad": _recompute,
         "grad_pass_through": _pass_through, "tape": _tape_basic, "tape/stop_recording": _tape_stop_and_unwatched,
         "tape/jacobian": _tape_jacobians}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    tf1 = require_tensorflow()
    ours = _values(tf, CASES[name])
    theirs = _values(tf1, CASES[name], session_config(tf1))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)


def test_custom_gradient_checks_its_grad_fn():
    with tf.Graph().as_default():
        w = tf.Variable(1.0)

        @tf.custom_gradient
        def uses_w(v):
            return v * w, lambda dy: dy

        with pytest.raises(TypeError, match="must accept keyword argument 'variables'"):
            uses_w(tf.constant(2.0))

        @tf.custom_gradient
        def wrong_count(a, b):
            return a + b, lambda dy: dy

        y = wrong_count(tf.constant(1.0), tf.constant(2.0))
        with pytest.raises(ValueError, match="1 gradients for 2 arguments"):
            tf.gradients(y, [])  # nothing to differentiate: no error
            tf.gradients(y, y.op.inputs[:1])


def test_non_persistent_tape_allows_one_gradient():
    with tf.Graph().as_default():
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
            tape.gradient(y, x)


def test_tape_watches_trainable_variables_read_inside():
    with tf.Graph().as_default():
        w = tf.Variable(3.0, name="w")
        frozen = tf.Variable(4.0, trainable=False, name="frozen")
        with tf.GradientTape(persistent=True) as tape:
            y = w * frozen
        assert tape.watched_variables() == (w,)
        gw, gf = tape.gradient(y, [w, frozen])
        assert gf is None
        with tf.GradientTape(watch_accessed_variables=False) as quiet:
            y2 = w * 2.0
        assert quiet.gradient(y2, w) is None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(gw) == 4.0
