"""shared_embedding_columns against TensorFlow's (one variable, its name, the outputs, in
input_layer and linear_model), the sequence columns through sequence_input_layer (values and
lengths by hand; input_layer refuses them as TensorFlow does), and tf.initializers' v1 names."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

FEATURES = {"watched": np.array([["a", "b"], ["c", ""], ["b", "b"]], object),
            "shown": np.array([["c", ""], ["a", "c"], ["", ""]], object),
            "age": np.array([[1.0], [2.0], [3.0]], np.float32)}


def _shared(tf, config=None):
    fc = tf.feature_column
    watched = fc.categorical_column_with_vocabulary_list("watched", ["a", "b", "c"])
    shown = fc.categorical_column_with_vocabulary_list("shown", ["a", "b", "c"])
    init = tf.constant_initializer(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    embeddings = fc.shared_embedding_columns([watched, shown], 4, initializer=init)
    named = fc.shared_embedding_columns([watched, shown], 4, combiner="sum", initializer=init,
                                        shared_embedding_collection_name="mine")
    with tf.Graph().as_default():
        feats = {k: tf.constant(v) for k, v in FEATURES.items()}
        net = fc.input_layer(feats, embeddings + [fc.numeric_column("age")])
        other = fc.input_layer(feats, named)
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session(config=config) as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            return names, [c.name for c in embeddings], sess.run([net, other])


def test_shared_embeddings_match_tensorflow():
    tf1 = require_tensorflow()
    ours, theirs = _shared(fm), _shared(tf1, session_config(tf1))
    assert ours[0] == theirs[0] == ["input_layer/shown_watched_shared_embedding/embedding_weights",
                                    "input_layer_1/mine/embedding_weights"]
    assert ours[1] == theirs[1]
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_sequence_input_layer_embeds_each_step_and_counts_lengths():
    fc = fm.feature_column
    tokens = fc.sequence_categorical_column_with_vocabulary_list("tokens", ["x", "y", "z"])
    ids = fc.sequence_categorical_column_with_identity("ids", 5)
    values = fc.sequence_numeric_column("values", default_value=-1.0)
    table = np.arange(9, dtype=np.float32).reshape(3, 3)
    columns = [fc.embedding_column(tokens, 3, initializer=fm.constant_initializer(table)), fc.indicator_column(ids),
               values]
    with fm.Graph().as_default():
        sparse_values = fm.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 1.5, 2.5], [2, 3])
        feats = {"tokens": fm.constant([["y", "z", ""], ["x", "", ""]]),
                 "ids": fm.constant([[4, 0, -1], [1, -1, -1]], fm.int64), "values": sparse_values}
        dense, length = fc.sequence_input_layer(feats, columns)
        names = [v.op.name for v in fm.global_variables()]
        with pytest.raises(fm.errors.InvalidArgumentError, match="sequence"):
            fc.input_layer(feats, [columns[0]])
        with fm.Session() as sess:
            sess.run([fm.global_variables_initializer(), fm.tables_initializer()])
            got, lengths = sess.run([dense, length])
    assert names == ["sequence_input_layer/tokens_embedding/embedding_weights"]
    assert got.shape == (2, 3, 5 + 3 + 1)  # columns in name order: ids, tokens, values
    np.testing.assert_array_equal(lengths, [2, 1])
    np.testing.assert_allclose(got[0, :2, :5], np.eye(5)[[4, 0]])
    np.testing.assert_allclose(got[0, :, 5:8], [table[1], table[2], [0, 0, 0]])
    np.testing.assert_allclose(got[:, :, 8], [[0.5, 1.5, -1.0], [2.5, -1.0, -1.0]])


def test_v1_initializers_namespace():
    assert fm.initializers.global_variables is fm.global_variables_initializer
    assert fm.initializers.tables_initializer is fm.tables_initializer
    assert fm.initializers.random_normal().stddev == 1.0  # TensorFlow 1.x's default, not Keras's 0.05
    with fm.Graph().as_default():
        v = fm.get_variable("v", [3, 3], initializer=fm.initializers.identity(2.0))
        with fm.Session() as sess:
            sess.run(fm.initializers.variables([v]))
            np.testing.assert_array_equal(sess.run(v), 2 * np.eye(3))
