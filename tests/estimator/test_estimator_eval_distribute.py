"""Estimator.evaluate under RunConfig(eval_distribute=MirroredStrategy) on 2 logical CPU
devices: each replica evaluates its own batches and the metrics (TensorFlow's SUM
aggregation of metric variables) equal one device evaluating all of them."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

RNG = np.random.default_rng(5)
X = RNG.standard_normal((96, 4)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 1.5 * RNG.standard_normal(96) > 0).astype(np.int64)
DEVICES = ["/cpu:0", "/cpu:1"]


def _input_fn(batch):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch)
    return input_fn


def _estimator(model_dir, **config):
    columns = [tf.feature_column.numeric_column("x", shape=(4,))]
    return tf.estimator.DNNClassifier([5], columns, model_dir=str(model_dir), optimizer="Adam",
                                      config=tf.estimator.RunConfig(log_step_count_steps=0,
                                                                    save_summary_steps=0, tf_random_seed=3,
                                                                    **config))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("model")
    _estimator(model_dir).train(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16).repeat(),
                                steps=30)
    return model_dir


def test_eval_distribute_matches_one_device(trained):
    want = _estimator(trained).evaluate(_input_fn(8))
    got = _estimator(trained, eval_distribute=tf.distribute.MirroredStrategy(DEVICES)).evaluate(_input_fn(8))
    assert sorted(got) == sorted(want)
    assert got["global_step"] == want["global_step"] == 30
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert 0.0 < got["accuracy"] < 1.0 and got["auc"] > 0.5       # a real model, not a constant


def test_eval_distribute_steps_read_one_batch_per_replica(trained):
    # 2 steps on 2 replicas read 4 batches of 8: one device needs 4 steps for the same rows
    want = _estimator(trained).evaluate(_input_fn(8), steps=4)
    got = _estimator(trained, eval_distribute=tf.distribute.MirroredStrategy(DEVICES)).evaluate(
        _input_fn(8), steps=2)
    for key in ("accuracy", "loss", "average_loss", "auc"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_eval_distribute_needs_a_mirrored_strategy(trained):
    est = _estimator(trained, eval_distribute=tf.distribute.get_strategy())
    with pytest.raises(tf.errors.UnimplementedError, match="eval_distribute"):
        est.evaluate(_input_fn(8))
