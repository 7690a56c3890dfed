"""``tf.estimator.inputs.numpy_input_fn`` (the classic Estimator tutorials' input) and the
hook aliases under ``tf.estimator``."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

RNG = np.random.default_rng(12)
X = RNG.standard_normal((120, 4)).astype(np.float32)
Y = (X[:, 0] - X[:, 1] > 0).astype(np.int32)


def _batches(input_fn, count):
    with tf.Graph().as_default():
        tensors = input_fn()
        with tf.Session() as sess:
            out = []
            for _ in range(count):
                try:
                    out.append(sess.run(tensors))
                except tf.errors.OutOfRangeError:
                    break
            return out


def test_batches_epochs_and_shapes():
    fn = tf.estimator.inputs.numpy_input_fn({"a": np.arange(10), "b": np.arange(10) * 2.0}, np.arange(10) % 2,
                                            batch_size=4, num_epochs=2, shuffle=False)
    batches = _batches(fn, 10)
    assert [len(labels) for _, labels in batches] == [4, 4, 4, 4, 4]  # 20 rows; batches cross the epochs
    np.testing.assert_array_equal(batches[2][0]["a"], [8, 9, 0, 1])
    only_features = _batches(tf.estimator.inputs.numpy_input_fn(np.arange(6.0), batch_size=4, shuffle=False), 5)
    assert [len(b) for b in only_features] == [4, 2]
    shuffled = _batches(tf.estimator.inputs.numpy_input_fn({"a": np.arange(50)}, batch_size=50, shuffle=True), 1)
    assert sorted(shuffled[0]["a"]) == list(range(50)) and list(shuffled[0]["a"]) != list(range(50))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="shuffle must be provided explicitly"):
        tf.estimator.inputs.numpy_input_fn({"a": np.arange(3)})
    with pytest.raises(ValueError, match="mismatched"):
        tf.estimator.inputs.numpy_input_fn({"a": np.arange(3)}, np.arange(4), shuffle=False)
    with pytest.raises(ValueError, match="can not overlap"):
        tf.estimator.inputs.numpy_input_fn({"a": np.arange(3)}, {"a": np.arange(3)}, shuffle=False)


def test_dnn_classifier_trains_from_numpy_input_fn(tmp_path):
    columns = [tf.feature_column.numeric_column("x", shape=[4])]
    estimator = tf.estimator.DNNClassifier(hidden_units=[8], feature_columns=columns, n_classes=2,
                                           model_dir=str(tmp_path),
                                           config=tf.estimator.RunConfig(log_step_count_steps=0, tf_random_seed=1))
    train = tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=20, num_epochs=None, shuffle=True)
    estimator.train(train, steps=150)
    test = tf.estimator.inputs.numpy_input_fn({"x": X}, Y, num_epochs=1, shuffle=False)
    assert estimator.evaluate(test)["accuracy"] > 0.85


def test_hooks_are_under_tf_estimator():
    assert tf.estimator.SessionRunHook is tf.train.SessionRunHook
    assert tf.estimator.StopAtStepHook is tf.train.StopAtStepHook
    assert tf.estimator.CheckpointSaverListener is tf.train.CheckpointSaverListener
