"""SavedModels: simple_save / SavedModelBuilder / loader.load round trips in flowmesh, the
files TensorFlow loads too, and Estimator.export_saved_model of a premade estimator."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _model(export_dir):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.nn.relu(tf.matmul(x, w), name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign([[3.0], [-4.0]]))
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})


def _serve(tf_module, export_dir, feed, config=None, tag="serve", key="serving_default"):
    with tf_module.Graph().as_default(), tf_module.Session(config=config) as sess:
        meta = tf_module.saved_model.loader.load(sess, [tag], export_dir)
        sig = meta.signature_def[key]
        feeds = {sig.inputs[k].name: v for k, v in feed.items()}
        return {k: sess.run(v.name, feeds) for k, v in sig.outputs.items()}


def test_simple_save_round_trip_and_tensorflow_loads_it(tmp_path):
    export_dir = str(tmp_path / "model")
    _model(export_dir)
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    feed = {"x": np.array([[1.0, 1.0], [2.0, 0.5]], np.float32)}
    ours = _serve(tf, export_dir, feed)
    np.testing.assert_allclose(ours["y"], [[0.0], [4.0]])
    tf1 = require_tensorflow()
    np.testing.assert_allclose(_serve(tf1, export_dir, feed, session_config(tf1))["y"], ours["y"])


def test_builder_tags_signatures_and_errors(tmp_path):
    export_dir = str(tmp_path / "b")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        v = tf.Variable(2.0, name="v")
        y = x * v
        counter = tf.Variable(0.0, name="counter", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            sigs = {"times": tf.saved_model.predict_signature_def({"x": x}, {"y": y})}
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=sigs,
                                                 main_op=tf.group(counter.initializer, counter.assign(5.0)))
            with pytest.raises(tf.errors.InvalidArgumentError, match="already has a meta graph"):
                builder.add_meta_graph(["serve"])
            builder.add_meta_graph(["train"], signature_def_map=sigs)
            builder.save(as_text=True)
    assert os.path.exists(os.path.join(export_dir, "saved_model.pbtxt"))
    assert _serve(tf, export_dir, {"x": [1.0, 3.0]}, key="times")["y"].tolist() == [2.0, 6.0]
    assert _serve(tf, export_dir, {"x": [1.0]}, tag="train", key="times")["y"].tolist() == [2.0]
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run("counter/read:0") == 5.0     # the main op ran after the restore
        with pytest.raises(tf.errors.NotFoundError, match=r"available tag sets: \[\['serve'\], \['train'\]\]"):
            tf.saved_model.loader.load(sess, ["gpu"], export_dir)
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.saved_model.builder.SavedModelBuilder(export_dir)


def test_estimator_export_saved_model(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 3)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.int64)
    columns = [tf.feature_column.numeric_column("x", shape=(3,))]
    est = tf.estimator.DNNClassifier([8], columns, model_dir=str(tmp_path / "run"), optimizer="Adam",
                                     config=tf.estimator.RunConfig(log_step_count_steps=0))
    est.train(lambda: ({"x": tf.constant(x)}, tf.constant(y)), steps=30)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.estimator.Estimator(lambda features, mode: None, model_dir=str(tmp_path / "none")).export_saved_model(
            str(tmp_path / "e"), lambda: None)
    raw = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 3])})
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    path = est.export_saved_model(str(tmp_path / "export"), raw, assets_extra={"meta/vocab.txt": str(vocab)}).decode()
    assert open(os.path.join(path, "assets.extra", "meta", "vocab.txt")).read() == "a\nb\n"
    assert os.path.dirname(path) == str(tmp_path / "export") and os.path.basename(path).isdigit()
    served = _serve(tf, path, {"x": x[:5]})
    expected = list(est.predict(lambda: {"x": tf.constant(x[:5])}))
    np.testing.assert_allclose(served["probabilities"], [p["probabilities"] for p in expected], rtol=1e-5)
    assert served["classes"].ravel().tolist() == [p["classes"][0] for p in expected]
