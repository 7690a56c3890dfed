"""tf.xla.experimental: jit_scope writes TensorFlow's XLA attributes (forward and gradient
ops), compile builds and runs the computation with TensorFlow's return conventions."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow


def build(lib):
    """The same small graph in flowmesh or TensorFlow; returns the XLA attrs of its ops."""
    x = lib.constant([[1.0, 2.0]])
    with lib.xla.experimental.jit_scope():
        y = lib.multiply(x, 3.0, name="y")
        with lib.xla.experimental.jit_scope(compile_ops=lambda node_def: node_def.op != "Square"):
            z = lib.square(y, name="z")
            w = lib.add(z, 1.0, name="w")
    with lib.xla.experimental.jit_scope(separate_compiled_gradients=True):
        v = lib.sin(w, name="v")
    lib.identity(v, name="outside")
    graph = lib.get_default_graph()

    def attrs(name):
        op = graph.get_operation_by_name(name)
        found = {}
        for key in ("_XlaCompile", "_XlaScope", "_XlaSeparateCompiledGradients"):
            try:
                found[key] = op.get_attr(key)
            except ValueError:
                pass
        return found

    return {name: attrs(name) for name in ("y", "z", "w", "v", "outside")}


def test_jit_scope_attributes_and_gradients():
    with tf.Graph().as_default():
        assert build(tf) == {
            "y": {"_XlaCompile": True, "_XlaScope": b"jit_scope_0", "_XlaSeparateCompiledGradients": False},
            "z": {"_XlaCompile": False, "_XlaScope": b"jit_scope_0", "_XlaSeparateCompiledGradients": False},
            "w": {"_XlaCompile": True, "_XlaScope": b"jit_scope_0", "_XlaSeparateCompiledGradients": False},
            "v": {"_XlaCompile": True, "_XlaScope": b"jit_scope_1", "_XlaSeparateCompiledGradients": True},
            "outside": {}}
        v = tf.get_default_graph().get_tensor_by_name("v:0")
        w = tf.get_default_graph().get_tensor_by_name("w:0")
        (grad,) = tf.gradients(v, [w])
        assert grad.op.get_attr("_XlaCompile") is True
        assert grad.op.get_attr("_XlaScope").startswith(b"jit_scope_1_grad_gradients")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad), np.cos(sess.run(w)), rtol=1e-6)
        with pytest.raises(TypeError, match="compile_ops"):
            with tf.xla.experimental.jit_scope(compile_ops="yes"):
                pass


def test_compile_returns_as_tensorflow_and_computes():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        single = tf.xla.experimental.compile(lambda x: x * 2.0, [a])
        pair = tf.xla.experimental.compile(lambda x, y: (x + y, x - y), [a, 1.0])
        nested = tf.xla.experimental.compile(lambda x: {"double": x * 2.0, "parts": [x, x + 1.0]}, [a])
        variable = tf.Variable(0.0)
        only_op = tf.xla.experimental.compile(lambda: variable.assign_add(1.0).op)
        assert isinstance(single, list) and len(single) == 1 and isinstance(only_op, tf.Operation)
        assert single[0].op.name == "output_0"
        assert tf.get_default_graph().get_operation_by_name("input_0").get_attr("_xla_compile_id") == b"cluster"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results = sess.run((single, pair, nested))
            sess.run(only_op)
            assert sess.run(variable) == 1.0
        np.testing.assert_allclose(results[0][0], [2.0, 4.0])
        np.testing.assert_allclose(results[1][0], [2.0, 3.0])
        np.testing.assert_allclose(results[1][1], [0.0, 1.0])
        np.testing.assert_allclose(results[2]["parts"][1], [2.0, 3.0])
        with pytest.raises(TypeError, match="inputs must be a list"):
            tf.xla.experimental.compile(lambda x: x, a)
        with pytest.raises(ValueError, match="followed by zero or more Operations"):
            tf.xla.experimental.compile(lambda: [tf.no_op(), tf.constant(1.0)])


@pytest.mark.oracle
def test_jit_scope_matches_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    with tf1.Graph().as_default():
        theirs = build(tf1)
    with tf.Graph().as_default():
        assert build(tf) == theirs
