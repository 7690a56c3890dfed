"""Estimator: train/evaluate/predict with checkpoints in model_dir, resume across instances,
eval summaries, RunConfig and the bad-input errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.summary.reader import summary_iterator

RNG = np.random.default_rng(0)
X = RNG.standard_normal((128, 4)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.3).astype(np.float32)


def input_fn():
    return {"x": tf.constant(X)}, tf.constant(Y)


def model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [4, 1])
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "twice": 2.0 * pred})
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "mae": tf.metrics.mean_absolute_error(labels, pred)})


def _estimator(model_dir, **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(model_dir), params={"lr": 0.1},
                                  config=tf.estimator.RunConfig(log_step_count_steps=0, **config))


def test_train_evaluate_predict_and_resume(tmp_path):
    est = _estimator(tmp_path, save_checkpoints_steps=30, keep_checkpoint_max=2)
    assert est.train(input_fn, steps=60) is est
    assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-60")
    ckpts = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert ckpts == ["model.ckpt-30.index", "model.ckpt-60.index"]   # keep_checkpoint_max=2
    result = est.evaluate(input_fn)
    assert result["global_step"] == 60 and result["loss"] < 1e-3 and result["mae"] < 0.05
    events = list(summary_iterator(str(next((tmp_path / "eval").iterdir()))))
    tags = {v.tag: v.simple_value for e in events if e.summary for v in e.summary.value}
    assert tags["loss"] == pytest.approx(float(result["loss"]), rel=1e-5) and "mae" in tags
    # a second instance resumes from the checkpoint and stops at max_steps
    other = _estimator(tmp_path)
    other.train(input_fn, max_steps=80)
    assert other.latest_checkpoint().endswith("model.ckpt-80")
    other.train(input_fn, max_steps=80)     # already there: nothing to do
    assert other.latest_checkpoint().endswith("model.ckpt-80")
    assert sorted(other.get_variable_names()) == ["b", "global_step", "w"]
    np.testing.assert_allclose(other.get_variable_value("w").ravel(), [1, -2, 0.5, 3], atol=1e-3)
    preds = list(other.predict(lambda: {"x": tf.constant(X[:5])}))
    assert len(preds) == 5 and set(preds[0]) == {"y", "twice"}
    np.testing.assert_allclose([p["y"][0] for p in preds], Y[:5, 0], atol=1e-2)
    only = next(other.predict(lambda: {"x": tf.constant(X[:2])}, predict_keys="y"))
    assert set(only) == {"y"}


def test_named_evaluation_and_no_checkpoint(tmp_path):
    est = _estimator(tmp_path)
    result = est.evaluate(input_fn, name="validation")
    assert result["global_step"] == 0 and result["loss"] > 0.1
    assert (tmp_path / "eval_validation").is_dir()


def test_run_config_reads_tf_config(monkeypatch):
    cluster = {"chief": ["localhost:1"], "worker": ["localhost:2", "localhost:3"], "ps": ["localhost:4"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    config = tf.estimator.RunConfig(save_checkpoints_steps=10)
    assert (config.task_type, config.task_id, config.is_chief) == ("worker", 1, False)
    assert config.master == "grpc://localhost:3" and config.num_ps_replicas == 1
    assert config.num_worker_replicas == 3 and config.global_id_in_cluster == 2
    assert config.save_checkpoints_secs is None
    changed = config.replace(save_checkpoints_secs=5)
    assert changed.save_checkpoints_steps is None and changed.save_checkpoints_secs == 5
    with pytest.raises(Exception):
        config.task_id = 3
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}}))
    assert tf.estimator.RunConfig().is_chief
    # The evaluator is not part of the training cluster: 0 workers, 0 ps (as TensorFlow).
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "evaluator", "index": 0}}))
    config = tf.estimator.RunConfig()
    assert (config.num_worker_replicas, config.num_ps_replicas, config.is_chief) == (0, 0, False)
    assert config.master == "" and config.global_id_in_cluster is None


def test_bad_input_errors(tmp_path):
    def no_train_op(features, labels, mode):
        return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(features["x"]))

    with pytest.raises(tf.errors.InvalidArgumentError, match="no train_op in mode 'train'"):
        tf.estimator.Estimator(no_train_op, model_dir=str(tmp_path / "a")).train(input_fn, steps=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown arguments"):
        tf.estimator.Estimator(lambda features, labelz: None)
    with pytest.raises(tf.errors.InvalidArgumentError, match="steps or max_steps"):
        _estimator(tmp_path / "b").train(input_fn, steps=1, max_steps=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="train_distribute"):
        _estimator(tmp_path / "d", train_distribute=object()).train(input_fn, steps=1)

    est = _estimator(tmp_path / "c")
    est.train(input_fn, steps=2)

    def wider(features, labels, mode):
        w = tf.get_variable("w", [4, 2])
        extra = tf.get_variable("extra", [3])
        loss = tf.reduce_mean(tf.matmul(features["x"], w)) + tf.reduce_sum(extra)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(
            0.1).minimize(loss, global_step=tf.train.get_global_step()))

    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.estimator.Estimator(wider, model_dir=str(tmp_path / "c")).train(input_fn, steps=1)
    assert "['extra']" in str(info.value) and "w: model [4, 2] vs checkpoint [4, 1]" in str(info.value)


def test_warm_start_from_another_model_dir(tmp_path):
    _estimator(tmp_path / "src").train(input_fn, steps=50)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "dst"), params={"lr": 0.0},
                                 warm_start_from=str(tmp_path / "src"))
    est.train(input_fn, steps=1)
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [1, -2, 0.5, 3], atol=1e-2)
