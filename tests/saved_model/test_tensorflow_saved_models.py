"""SavedModels written by TensorFlow (``tf.compat.v1.saved_model.simple_save`` and
``SavedModelBuilder`` in the installed TensorFlow) load in flowmesh's
``tf.saved_model.loader.load`` and serve the same outputs; their saver graph (TensorFlow's
``StaticRegexFullMatch``/``Select``/``StringJoin``/``ShardedFilename``/``SaveV2``/
``MergeV2Checkpoints`` ops) runs in flowmesh and writes a checkpoint TensorFlow reads; lookup
tables (from a vocabulary asset or constant keys) work. And TensorFlow serves a flowmesh
Estimator's export."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

X = np.array([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0], [2.0, 2.0, 2.0], [-1.0, 0.25, 3.0]], np.float32)


def _tf_resource_model(tf1, export_dir):
    """simple_save of a softmax layer on resource variables; returns TensorFlow's outputs."""
    with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
        x = tf1.placeholder(tf1.float32, [None, 3], name="x")
        w = tf1.get_variable("w", initializer=np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
        b = tf1.get_variable("b", initializer=np.array([0.5, -0.5], np.float32))
        y = tf1.nn.softmax(tf1.matmul(x, w) + b, name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
        return {"y": sess.run(y, {x: X})}


def _tf_ref_model(tf1, export_dir):
    """SavedModelBuilder, ref variables (VariableV2), a row-selecting Select and a string
    output, under a custom tag and signature key; returns TensorFlow's outputs."""
    with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
        x = tf1.placeholder(tf1.float32, [None, 3], name="x")
        kernel = tf1.get_variable("dense/kernel", use_resource=False,
                                  initializer=np.linspace(-0.5, 0.7, 12, dtype=np.float32).reshape(3, 4))
        bias = tf1.get_variable("dense/bias", use_resource=False, initializer=np.full(4, 0.1, np.float32))
        hidden = tf1.nn.relu(tf1.nn.bias_add(tf1.matmul(x, kernel), bias))
        rows = tf1.where(tf1.reduce_sum(hidden, 1) > 1.0, hidden, -hidden, name="rows")   # TF1 Select
        score = tf1.reduce_sum(rows, 1, name="score")
        label = tf1.where(score > 0.0, tf1.fill(tf1.shape(score), "pos"), tf1.fill(tf1.shape(score), "neg"))
        sess.run(tf1.global_variables_initializer())
        builder = tf1.saved_model.builder.SavedModelBuilder(export_dir)
        signature = tf1.saved_model.predict_signature_def({"x": x}, {"rows": rows, "score": score,
                                                                      "label": label})
        builder.add_meta_graph_and_variables(sess, ["serve", "cpu"], signature_def_map={"scores": signature},
                                             main_op=tf1.no_op())
        builder.save()
        return dict(zip(("rows", "score", "label"), sess.run([rows, score, label], {x: X})))


WORDS = np.array([b"cat", b"dog", b"emu", b"zebra", b"dog"], dtype=object)


def _tf_vocab_model(tf1, export_dir):
    """Lookup tables, as an Estimator with vocabulary columns exports them: one from a
    vocabulary file (an asset; the original is deleted after the export, so the loader must
    use the SavedModel's copy) and one from constant keys; returns TensorFlow's outputs."""
    import os

    vocab = os.path.join(os.path.dirname(export_dir), "vocab.txt")
    with open(vocab, "w") as f:
        f.write("cat\ndog\nemu\n")
    with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
        words = tf1.placeholder(tf1.string, [None], name="words")
        from_file = tf1.lookup.StaticHashTable(tf1.lookup.TextFileInitializer(
            vocab, tf1.string, tf1.lookup.TextFileIndex.WHOLE_LINE, tf1.int64,
            tf1.lookup.TextFileIndex.LINE_NUMBER), -1)
        from_keys = tf1.lookup.StaticHashTable(tf1.lookup.KeyValueTensorInitializer(
            tf1.constant(["dog", "zebra"]), tf1.constant([10.0, 20.0])), -1.0)
        ids = from_file.lookup(words)
        emb = tf1.get_variable("emb", initializer=np.arange(8, dtype=np.float32).reshape(4, 2))
        picked = tf1.gather(emb, tf1.where(ids < 0, tf1.fill(tf1.shape(ids), tf1.constant(3, tf1.int64)), ids))
        score = tf1.reduce_sum(picked, 1) + from_keys.lookup(words)
        sess.run([tf1.global_variables_initializer(), tf1.tables_initializer()])
        builder = tf1.saved_model.builder.SavedModelBuilder(export_dir)
        signature = tf1.saved_model.predict_signature_def({"words": words}, {"ids": ids, "score": score})
        builder.add_meta_graph_and_variables(
            sess, ["serve"], signature_def_map={"serving_default": signature},
            assets_collection=tf1.get_collection(tf1.GraphKeys.ASSET_FILEPATHS), main_op=tf1.tables_initializer())
        builder.save()
        want = dict(zip(("ids", "score"), sess.run([ids, score], {words: WORDS})))
    os.remove(vocab)
    return want


def _serve(export_dir, tags, key):
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, tags, export_dir)
        signature = meta.signature_def[key]
        outputs = {k: v.name for k, v in signature.outputs.items()}
        (name, tensor), = signature.inputs.items()
        return sess.run(outputs, {tensor.name: WORDS if name == "words" else X})


@pytest.mark.parametrize("make, tags, key", [(_tf_resource_model, ["serve"], "serving_default"),
                                             (_tf_ref_model, ["serve", "cpu"], "scores"),
                                             (_tf_vocab_model, ["serve"], "serving_default")],
                         ids=["simple_save_resource_variables", "builder_ref_variables", "lookup_tables"])
def test_flowmesh_serves_a_tensorflow_saved_model(tmp_path, make, tags, key):
    tf1 = require_tensorflow()
    export_dir = str(tmp_path / "tf_model")
    want = make(tf1, export_dir)
    got = _serve(export_dir, tags, key)
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        if value.dtype == object:
            assert got[name].tolist() == value.tolist(), name
        else:
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_tensorflow_saver_graph_runs_in_flowmesh(tmp_path):
    tf1 = require_tensorflow()
    export_dir = str(tmp_path / "tf_model")
    _tf_ref_model(tf1, export_dir)
    prefix = str(tmp_path / "again" / "model.ckpt")
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve", "cpu"], export_dir)
        saver_def = meta.saver_def
        written = sess.run(saver_def.save_tensor_name, {saver_def.filename_tensor_name: prefix})
        restored = {name: sess.run(f"{name}/read:0") for name in ("dense/kernel", "dense/bias")}
    assert (written.decode() if isinstance(written, bytes) else str(written)) == prefix
    reader = tf1.train.load_checkpoint(prefix)                        # TensorFlow reads what its ops wrote
    assert sorted(reader.get_variable_to_shape_map()) == ["dense/bias", "dense/kernel"]
    for name, value in restored.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value)
    np.testing.assert_allclose(restored["dense/bias"], np.full(4, 0.1, np.float32))


def test_tensorflow_serves_a_flowmesh_estimator_export(tmp_path):
    tf1 = require_tensorflow()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((120, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -1.0, 0.5], np.float32) > 0).astype(np.int64)
    est = tf.estimator.DNNClassifier([6], [tf.feature_column.numeric_column("x", shape=(3,))],
                                     model_dir=str(tmp_path / "run"), optimizer="Adam",
                                     config=tf.estimator.RunConfig(log_step_count_steps=0))
    est.train(lambda: ({"x": tf.constant(x)}, tf.constant(y)), steps=20)
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")})
    path = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    want = np.stack([p["probabilities"] for p in est.predict(lambda: {"x": tf.constant(X)})])
    with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
        meta = tf1.saved_model.loader.load(sess, ["serve"], path)
        signature = meta.signature_def["serving_default"]
        got = sess.run(signature.outputs["probabilities"].name, {signature.inputs["x"].name: X})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
