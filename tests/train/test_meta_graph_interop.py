"""``.meta`` files interchange with TensorFlow: TensorFlow's meta graph + checkpoint restore
and run in flowmesh, and flowmesh's in TensorFlow (``Saver(write_version=SaverDef.V2)``
exports TensorFlow's save/restore graph)."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(5)
W = RNG.normal(size=(4, 3)).astype(np.float32)
X = RNG.normal(size=(2, 4)).astype(np.float32)


def _model(lib):
    x = lib.placeholder(lib.float32, [None, 4], name="x")
    w = lib.get_variable("w", initializer=lib.constant(W))
    b = lib.get_variable("b", shape=[3], initializer=lib.zeros_initializer())
    probs = lib.nn.softmax(lib.matmul(x, w) + b, name="probs")
    lib.add_to_collection("outputs", probs)
    return b, probs


def _train_and_save(lib, prefix: str, session_kwargs=None, **saver_kwargs):
    """Sets b to a non-initial value, saves, returns (checkpoint, expected probs)."""
    with lib.Graph().as_default() as g:
        b, probs = _model(lib)
        saver = lib.train.Saver(**saver_kwargs)
        with lib.Session(graph=g, **(session_kwargs or {})) as sess:
            sess.run(lib.global_variables_initializer())
            sess.run(lib.assign(b, [0.5, -1.0, 2.0]))
            return saver.save(sess, prefix), sess.run(probs, {"x:0": X})


def _restore_and_run(lib, ckpt: str, session_kwargs=None):
    with lib.Graph().as_default() as g:
        saver = lib.train.import_meta_graph(ckpt + ".meta")
        assert saver is not None
        outputs = lib.get_collection("outputs")
        assert [t.name for t in outputs] == ["probs:0"]
        with lib.Session(graph=g, **(session_kwargs or {})) as sess:
            saver.restore(sess, ckpt)
            return sess.run(outputs[0], {"x:0": X})


def test_tensorflow_meta_graph_and_checkpoint_run_in_flowmesh(tmp_path):
    tf1 = require_tensorflow()
    ckpt, expected = _train_and_save(tf1, str(tmp_path / "m"), {"config": session_config(tf1)})
    np.testing.assert_allclose(_restore_and_run(tf, ckpt), expected, rtol=1e-6)


def test_flowmesh_v2_meta_graph_and_checkpoint_run_in_tensorflow(tmp_path):
    tf1 = require_tensorflow()
    ckpt, expected = _train_and_save(tf, str(tmp_path / "m"), write_version=tf.train.SaverDef.V2)
    got = _restore_and_run(tf1, ckpt, {"config": session_config(tf1)})
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(_restore_and_run(tf, ckpt), expected, rtol=1e-6)  # and in flowmesh


def test_default_flowmesh_meta_graph_imports_in_tensorflow_without_its_saver(tmp_path):
    tf1 = require_tensorflow()
    ckpt, expected = _train_and_save(tf, str(tmp_path / "m"))
    with tf1.Graph().as_default() as g:
        tf1.train.import_meta_graph(ckpt + ".meta")  # flowmesh-only restore ops are left out
        assert {v.op.name for v in tf1.global_variables()} == {"w", "b"}  # from our VariableDefs
        with tf1.Session(graph=g, config=session_config(tf1)) as sess:
            sess.run(tf1.global_variables_initializer())
            initial = sess.run("probs:0", {"x:0": X})
    with tf.Graph().as_default() as g:  # flowmesh reads its lossless view, saver included
        saver = tf.train.import_meta_graph(ckpt + ".meta")
        with tf.Session(graph=g) as sess:
            saver.restore(sess, ckpt)
            np.testing.assert_allclose(sess.run("probs:0", {"x:0": X}), expected, rtol=1e-6)
    assert not np.allclose(initial, expected)


def test_export_meta_graph_text_format_parses_in_tensorflow(tmp_path):
    tf1 = require_tensorflow()
    from google.protobuf import text_format

    with tf.Graph().as_default():
        _model(tf)
        path = str(tmp_path / "g.pbtxt")
        proto = tf.train.export_meta_graph(path, as_text=True)
    theirs = text_format.Parse(open(path).read(), tf1.MetaGraphDef())
    assert [n.name for n in theirs.graph_def.node] == [n.name for n in proto.graph_def.node]
    assert list(theirs.collection_def["outputs"].node_list.value) == ["probs:0"]
