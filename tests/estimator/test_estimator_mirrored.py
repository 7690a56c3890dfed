"""Estimator.train under RunConfig(train_distribute=MirroredStrategy) on 2 logical CPU
devices matches one device fed the same global batch; checkpoints as without a strategy."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

RNG = np.random.default_rng(1)
X = RNG.standard_normal((64, 4)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.3).astype(np.float32)
DEVICES = ["/cpu:0", "/cpu:1"]


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features["x"], 3, activation=tf.nn.tanh, name="hidden",
                             kernel_initializer=tf.constant_initializer(0.1))
    pred = tf.layers.dense(hidden, 1, name="out", kernel_initializer=tf.constant_initializer(0.2))
    loss = tf.losses.mean_squared_error(labels, pred)
    optimizer = tf.train.MomentumOptimizer(0.05, 0.9)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn_of(batch):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch).repeat()
    return input_fn


def _estimator(model_dir, **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(model_dir), config=tf.estimator.RunConfig(
        log_step_count_steps=0, save_summary_steps=0, **config))


def _weights(est):
    return {n: est.get_variable_value(n) for n in est.get_variable_names() if "Momentum" not in n}


def test_mirrored_training_matches_one_device_on_the_global_batch(tmp_path):
    # per-replica batch 16 on 2 replicas: each step consumes 32 rows, as one device with batch 32
    mirrored = _estimator(tmp_path / "m", train_distribute=tf.distribute.MirroredStrategy(DEVICES))
    mirrored.train(input_fn_of(16), steps=6)
    single = _estimator(tmp_path / "s")
    single.train(input_fn_of(32), steps=6)
    assert mirrored.get_variable_value("global_step") == 6
    assert sorted(mirrored.get_variable_names()) == sorted(single.get_variable_names())
    got, want = _weights(mirrored), _weights(single)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # resume from the checkpoint in a new Estimator: replicas restart from the restored values
    again = _estimator(tmp_path / "m", train_distribute=tf.distribute.MirroredStrategy(DEVICES))
    again.train(input_fn_of(16), steps=2)
    single.train(input_fn_of(32), steps=2)
    assert again.get_variable_value("global_step") == 8
    for name, value in _weights(single).items():
        np.testing.assert_allclose(_weights(again)[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_bad_train_distribute(tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a tf.distribute strategy"):
        _estimator(tmp_path / "a", train_distribute=object()).train(input_fn_of(8), steps=1)
