"""GraphDef interchange with TensorFlow: frozen graphs written by TensorFlow run in flowmesh
and the reverse, ``import_graph_def`` options, ``node_def``, ``write_graph``, and event
files whose graph TensorFlow parses (what TensorBoard's Graphs tab reads)."""

from __future__ import annotations

import glob

import numpy as np
import pytest
from google.protobuf import text_format

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(3)
KERNEL = RNG.normal(size=(3, 3, 2, 4)).astype(np.float32)
DENSE = RNG.normal(size=(4 * 4 * 4, 3)).astype(np.float32)
BIAS = np.array([0.1, -0.2, 0.3], np.float32)
X = RNG.normal(size=(2, 8, 8, 2)).astype(np.float32)


def _model(lib):
    """A small CNN with variables, in flowmesh or TensorFlow: x -> probs."""
    x = lib.placeholder(lib.float32, [None, 8, 8, 2], name="x")
    k = lib.Variable(KERNEL, name="kernel")
    w = lib.Variable(DENSE, name="dense")
    b = lib.Variable(BIAS, name="bias")
    h = lib.nn.relu(lib.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"))
    h = lib.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    logits = lib.nn.bias_add(lib.matmul(lib.reshape(h, [-1, 64]), w), b)
    return lib.nn.softmax(logits, name="probs")


def _freeze(lib, graph_util, session_kwargs=None):
    with lib.Graph().as_default() as g:
        probs = _model(lib)
        with lib.Session(graph=g, **(session_kwargs or {})) as sess:
            sess.run(lib.global_variables_initializer())
            expected = sess.run(probs, {"x:0": X})
            frozen = graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["probs"])
    return frozen, expected


def test_tensorflow_frozen_graph_runs_in_flowmesh(tmp_path):
    tf1 = require_tensorflow()
    frozen, expected = _freeze(tf1, tf1.graph_util, {"config": session_config(tf1)})
    path = tf1.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    graph_def = tf.GraphDef.FromString(open(path, "rb").read())
    assert {n.op for n in graph_def.node} >= {"Const", "Conv2D", "MaxPool", "BiasAdd", "Softmax"}
    with tf.Graph().as_default():
        probs, = tf.import_graph_def(graph_def, return_elements=["probs:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(probs, {"x:0": X}), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("as_text", [False, True])
def test_flowmesh_frozen_graph_runs_in_tensorflow(tmp_path, as_text):
    tf1 = require_tensorflow()
    frozen, expected = _freeze(tf, tf.graph_util)
    assert "VarHandleOp" not in {n.op for n in frozen.node}
    path = tf.train.write_graph(frozen, str(tmp_path), "frozen.pbtxt" if as_text else "frozen.pb", as_text)
    graph_def = tf1.GraphDef()
    if as_text:
        text_format.Parse(open(path).read(), graph_def)
    else:
        graph_def.ParseFromString(open(path, "rb").read())
    with tf1.Graph().as_default() as g:
        probs, = tf1.import_graph_def(graph_def, return_elements=["probs:0"], name="")
        with tf1.Session(graph=g, config=session_config(tf1)) as sess:
            np.testing.assert_allclose(sess.run(probs, {"x:0": X}), expected, rtol=1e-5, atol=1e-6)


def test_tensorflow_imports_and_runs_a_graph_with_variables():
    tf1 = require_tensorflow()
    with tf.Graph().as_default() as g:
        probs = _model(tf)
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            expected = sess.run(probs, {"x:0": X})
    graph_def = tf1.GraphDef.FromString(g.as_graph_def().SerializeToString())
    with tf1.Graph().as_default() as tg:
        tf1.import_graph_def(graph_def, name="")
        with tf1.Session(graph=tg, config=session_config(tf1)) as sess:
            sess.run(init.name)
            np.testing.assert_allclose(sess.run("probs:0", {"x:0": X}), expected, rtol=1e-5, atol=1e-6)


def test_node_def_reports_tensorflows_op_types():
    tf1 = require_tensorflow()
    ours, theirs = {}, {}
    for lib, out in ((tf, ours), (tf1, theirs)):
        with lib.Graph().as_default() as g:
            v = lib.Variable(1.0, name="v")
            lib.add(v, 2.0, name="sum")
            out.update({op.name: op.node_def.op for op in g.get_operations()})
    assert ours["v"] == theirs["v"] == "VarHandleOp"
    assert ours["sum"] == theirs["sum"] == "AddV2"


def test_import_graph_def_prefix_input_map_and_return_elements():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [None], name="a")
        tf.multiply(a, 3.0, name="out")
    graph_def = g.as_graph_def()
    with tf.Graph().as_default():
        fed = tf.constant([1.0, 2.0])
        out_t, out_op = tf.import_graph_def(graph_def, input_map={"a": fed}, return_elements=["out:0", "out"])
        assert out_t.name == "import/out:0" and out_op.name == "import/out"
        tf.import_graph_def(graph_def)  # a second import gets a fresh prefix
        assert tf.get_default_graph().get_operation_by_name("import_1/out").type == "Mul"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out_t), [3.0, 6.0])
        with pytest.raises(ValueError, match="not found in graph_def"):
            tf.import_graph_def(graph_def, input_map={"missing:0": fed})


def test_unknown_op_type_is_not_found_naming_the_node():
    graph_def = tf.GraphDef()
    graph_def.node.add(name="weird", op="NoSuchOpAnywhere")
    with tf.Graph().as_default(), pytest.raises(tf.errors.NotFoundError, match="weird.*|NoSuchOpAnywhere"):
        tf.import_graph_def(graph_def)


def test_event_file_graph_parses_as_tensorflows_graph_def(tmp_path):
    tf1 = require_tensorflow()
    with tf.Graph().as_default() as g:
        _model(tf)
        writer = tf.summary.FileWriter(str(tmp_path), graph=g)
        writer.close()
    (events,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    graphs = [e.graph_def for e in tf1.train.summary_iterator(events) if e.graph_def]
    graph_def = tf1.GraphDef.FromString(graphs[0])
    assert [n.name for n in graph_def.node] == [op.name for op in g.get_operations()]
    with tf1.Graph().as_default():
        tf1.import_graph_def(graph_def, name="")  # TensorFlow accepts every node
