"""tf.make_template (variable sharing across calls) and tf.Module (variable tracking),
compared with TensorFlow's names and values."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _template_graph(t):
    def layer(x, units):
        w = t.get_variable("w", [3, units], initializer=t.constant_initializer(0.5))
        b = t.get_variable("b", [units], initializer=t.zeros_initializer())
        return t.matmul(x, w) + b

    dense = t.make_template("dense", layer, units=2)
    x = t.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    first, second = dense(x), dense(x * 2.0)
    other = t.make_template("dense", layer, units=2)(x)
    now = t.make_template("early", layer, create_scope_now_=True, units=1)
    third = now(x)
    names = ([v.name for v in t.global_variables()], dense.variable_scope_name,
             [v.name for v in dense.trainable_variables], now.variable_scope_name)
    return names, [first, second, other, third]


@pytest.mark.oracle
def test_make_template_shares_variables_as_tensorflow():
    tf1 = require_tensorflow()
    results = []
    for lib, config in ((tf, None), (tf1, session_config(tf1))):
        with lib.Graph().as_default():
            names, outs = _template_graph(lib)
            with lib.Session(config=config) as sess:
                sess.run(lib.global_variables_initializer())
                results.append((names, sess.run(outs)))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b)


def test_make_template_rejects_new_variables_on_later_calls():
    with tf.Graph().as_default():
        bad = tf.make_template("bad", lambda: tf.Variable(1.0))
        bad()
        with pytest.raises(ValueError, match="Trainable variable created when calling a template"):
            bad()


def _module_graph(t):
    class Dense(t.Module):
        def __init__(self, units, name=None):
            super().__init__(name=name)
            self.w = t.Variable(np.ones((2, units), np.float32), name="w")
            self.b = t.Variable(np.zeros(units, np.float32), name="b", trainable=False)

        @t.Module.with_name_scope
        def __call__(self, x):
            return t.matmul(x, self.w) + self.b

    class MLP(t.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(3, name="first"), Dense(1, name="second")]
            self.extra = {"scale": t.Variable(2.0, name="scale")}

    mlp = MLP()
    out = mlp.layers[1](mlp.layers[0](t.ones([1, 2]))[:, :2])
    info = (mlp.name, [v.name for v in mlp.variables], [v.name for v in mlp.trainable_variables],
            [m.name for m in mlp.submodules], out.name)
    return info, out


@pytest.mark.oracle
def test_module_tracks_variables_as_tensorflow():
    tf1 = require_tensorflow()
    results = []
    for lib, config in ((tf, None), (tf1, session_config(tf1))):
        with lib.Graph().as_default():
            info, out = _module_graph(lib)
            with lib.Session(config=config) as sess:
                sess.run(lib.global_variables_initializer())
                results.append((info, sess.run(out)))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_module_name_must_be_an_identifier():
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="has space")
