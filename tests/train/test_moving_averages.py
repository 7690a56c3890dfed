"""tf.train.ExponentialMovingAverage against tf.compat.v1: shadow names, values over
several updates (with num_updates, zero_debias on tensors) and variables_to_restore."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _run(tf, config=None):
    with tf.Graph().as_default() as g:
        step = tf.Variable(0, name="step", trainable=False)
        w = tf.Variable([1.0, 2.0], name="w")
        b = tf.Variable(3.0, name="b")
        t = tf.identity(w * 2.0, name="t")
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
        before = ema.average_name(w)
        with tf.control_dependencies([w.assign_add([1.0, -1.0]), step.assign_add(1)]):
            update = ema.apply([w, b])
        ema2 = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="debiased")
        update2 = ema2.apply([t])
        names = sorted(v.name for v in tf.global_variables())
        restore = sorted(ema.variables_to_restore())
        mavs = sorted(v.name for v in tf.moving_average_variables())
        out = []
        with tf.Session(graph=g, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(4):
                sess.run(update)
                sess.run(update2)
                out.append(sess.run([ema.average(w), ema.average(b), ema2.average(t)]))
        return out, names, restore, mavs, before, ema.average_name(w)


def test_matches_tensorflow():
    tf1 = require_tensorflow()
    ours = _run(fm)
    theirs = _run(tf1, session_config(tf1))
    assert ours[1:] == theirs[1:]
    for a, b in zip(ours[0], theirs[0]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6)


def test_integer_variable_is_refused_by_name():
    with fm.Graph().as_default():
        v = fm.Variable(1, name="counter")
        with pytest.raises(TypeError, match="counter"):
            fm.train.ExponentialMovingAverage(0.9).apply([v])
