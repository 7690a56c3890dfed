"""tf.layers naming, reuse, regularization, UPDATE_OPS, errors and checkpoints with TensorFlow."""

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_layers
from flowmesh.testing.tf_oracle import session_config


def test_names_and_uniquification():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        tf.layers.dense(x, 3)
        tf.layers.dense(x, 3)
        h = tf.layers.conv2d(tf.placeholder(tf.float32, [None, 5, 5, 1]), 2, 3)
        tf.layers.batch_normalization(h)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias", "conv2d/kernel",
                         "conv2d/bias", "batch_normalization/gamma", "batch_normalization/beta",
                         "batch_normalization/moving_mean", "batch_normalization/moving_variance"]
        assert len(tf.trainable_variables()) == 8


def test_reuse_rules():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        tf.layers.dense(x, 3, name="fc")
        with pytest.raises(ValueError, match="fc/kernel already exists"):
            tf.layers.dense(x, 3, name="fc")
        tf.layers.dense(x, 3, name="fc", reuse=True)
        with tf.variable_scope("fc", reuse=tf.AUTO_REUSE):
            pass
        tf.layers.dense(x, 3, name="fc", reuse=tf.AUTO_REUSE)
        with pytest.raises(ValueError, match="does not exist"):
            tf.layers.dense(x, 3, name="new", reuse=True)
        assert len(tf.global_variables()) == 2


def test_scope_initializer_and_custom_getter():
    seen = []

    def getter(next_getter, name, *args, **kwargs):
        seen.append(name)
        return next_getter(name, *args, **kwargs)

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        with tf.variable_scope("net", initializer=tf.constant_initializer(0.5), custom_getter=getter):
            y = tf.layers.dense(x, 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y, {x: np.ones((1, 2))}), [[1.0, 1.0]])
    assert seen == ["net/dense/kernel", "net/dense/bias"]


def test_regularizers_feed_regularization_losses():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(2.0),
                        bias_initializer=tf.constant_initializer(-1.0),
                        kernel_regularizer=tf.keras.regularizers.l2(0.1),
                        bias_regularizer=tf.keras.regularizers.l1(0.5))
        losses = tf.losses.get_regularization_losses()
        assert len(losses) == 2
        total = tf.losses.get_regularization_loss()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(total) == pytest.approx(0.1 * 6 * 4.0 + 0.5 * 2)


def test_update_ops_and_training_flag():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.batch_normalization(x, training=training, momentum=0.0)
        tf.layers.batch_normalization(x, name="frozen")  # training=False: no updates
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        value = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]], np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(updates, {x: value, training: False})
            mean = [v for v in tf.global_variables() if v.op.name == "batch_normalization/moving_mean"][0]
            np.testing.assert_allclose(sess.run(mean), [0, 0, 0])
            out = sess.run([y] + updates, {x: value, training: True})[0]
            np.testing.assert_allclose(sess.run(mean), value.mean(0))
            np.testing.assert_allclose(out, (value - value.mean(0)) / np.sqrt(value.var(0) + 1e-3), rtol=1e-5)


def test_dropout_training_flag():
    with tf.Graph().as_default():
        x = tf.ones([1000])
        train = tf.layers.dropout(x, 0.5, training=True, seed=1)
        infer = tf.layers.dropout(x, 0.5)
        with tf.Session() as sess:
            a, b = sess.run([train, infer])
        assert set(np.unique(a)) <= {0.0, 2.0} and 350 < (a == 0).sum() < 650
        np.testing.assert_array_equal(b, np.ones(1000))


def test_incompatible_shapes_name_both_layers():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        layer = tf.layers.Dense(3, name="first")
        layer(x)
        other = tf.layers.dense(x, 5, name="second")
        with pytest.raises(ValueError) as info:
            layer(other)
        message = str(info.value)
        assert "first" in message and "second" in message and "(None, 5)" in message and "4" in message
        with pytest.raises(ValueError, match="ndim=4"):
            tf.layers.conv2d(x, 2, 3)


def _tf_layers_graph(tf_mod, layers):
    x = tf_mod.placeholder(tf_mod.float32, [None, 6, 6, 2], name="x")
    h = layers.conv2d(x, 3, 3, activation=tf_mod.nn.relu)
    h = layers.batch_normalization(h, training=True)
    y = layers.dense(layers.flatten(h), 4)
    return x, y


def test_tensorflow_checkpoint_restores_by_name(tmp_path):
    tf1, tf_layers = require_tf_layers()
    value = np.random.default_rng(0).standard_normal((2, 6, 6, 2)).astype(np.float32)
    graph = tf1.Graph()
    with graph.as_default():
        x, y = _tf_layers_graph(tf1, tf_layers)
        with tf1.Session(graph=graph, config=session_config(tf1)) as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS), {x: value})
            expected = sess.run(y, {x: value})
            path = tf1.train.Saver().save(sess, str(tmp_path / "tf" / "model.ckpt"))
            tf_names = sorted(v.op.name for v in tf1.global_variables())
    with tf.Graph().as_default():
        x, y = _tf_layers_graph(tf, tf.layers)
        assert sorted(v.op.name for v in tf.global_variables()) == tf_names
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run(y, {x: value}), expected, rtol=1e-4, atol=1e-5)
            back = tf.train.Saver(write_version=tf.train.SaverDef.V2).save(sess, str(tmp_path / "fm" / "model.ckpt"))
    graph = tf1.Graph()
    with graph.as_default():
        x, y = _tf_layers_graph(tf1, tf_layers)
        with tf1.Session(graph=graph, config=session_config(tf1)) as sess:
            tf1.train.Saver().restore(sess, back)
            np.testing.assert_allclose(sess.run(y, {x: value}), expected, rtol=1e-4, atol=1e-5)
