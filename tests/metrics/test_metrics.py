"""tf.metrics against tf.compat.v1.metrics: values and update ops over several batches,
with and without weights, and the local variables' names."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(7)
BATCHES = [
    {"labels": RNG.integers(0, 2, size=8).astype(np.int64),
     "scores": RNG.random(8).astype(np.float32),
     "weights": RNG.random(8).astype(np.float32)}
    for _ in range(3)
]


def _binary(tf, fn):
    return lambda lab, sc, w: fn(tf)(lab, sc, w)


CASES = {
    "accuracy": lambda tf, lab, sc, w: tf.metrics.accuracy(lab, tf.cast(sc > 0.5, tf.int64)),
    "accuracy_w": lambda tf, lab, sc, w: tf.metrics.accuracy(
        lab, tf.cast(sc > 0.5, tf.int64), weights=w),
    "mean": lambda tf, lab, sc, w: tf.metrics.mean(sc),
    "mean_w": lambda tf, lab, sc, w: tf.metrics.mean(sc, weights=w),
    "auc": lambda tf, lab, sc, w: tf.metrics.auc(lab, sc),
    "auc_w_10": lambda tf, lab, sc, w: tf.metrics.auc(lab, sc, weights=w, num_thresholds=10),
    "auc_pr": lambda tf, lab, sc, w: tf.metrics.auc(lab, sc, curve="PR"),
    "auc_pr_careful": lambda tf, lab, sc, w: tf.metrics.auc(
        lab, sc, curve="PR", summation_method="careful_interpolation"),
    "auc_minoring": lambda tf, lab, sc, w: tf.metrics.auc(lab, sc, summation_method="minoring"),
    "auc_thresholds": lambda tf, lab, sc, w: tf.metrics.auc(lab, sc, thresholds=[0.7, 0.3, 0.5]),
    "precision": lambda tf, lab, sc, w: tf.metrics.precision(lab, sc > 0.5),
    "recall_w": lambda tf, lab, sc, w: tf.metrics.recall(lab, sc > 0.5, weights=w),
    "mse": lambda tf, lab, sc, w: tf.metrics.mean_squared_error(tf.cast(lab, tf.float32), sc),
    "rmse_w": lambda tf, lab, sc, w: tf.metrics.root_mean_squared_error(
        tf.cast(lab, tf.float32), sc, weights=w),
    "mae": lambda tf, lab, sc, w: tf.metrics.mean_absolute_error(tf.cast(lab, tf.float32), sc),
    "true_positives": lambda tf, lab, sc, w: tf.metrics.true_positives(lab, sc > 0.5),
    "false_negatives_w": lambda tf, lab, sc, w: tf.metrics.false_negatives(lab, sc > 0.5, w),
    "per_class": lambda tf, lab, sc, w: tf.metrics.mean_per_class_accuracy(
        lab, tf.cast(sc > 0.3, tf.int64), 2),
    "column_labels": lambda tf, lab, sc, w: tf.metrics.accuracy(
        tf.expand_dims(lab, -1), tf.cast(sc > 0.5, tf.int64)),
}


def _run(tf, build, config=None):
    with tf.Graph().as_default() as g:
        lab = tf.placeholder(tf.int64, [None], name="labels")
        sc = tf.placeholder(tf.float32, [None], name="scores")
        w = tf.placeholder(tf.float32, [None], name="weights")
        value, update = build(tf, lab, sc, w)
        names = sorted(v.name for v in tf.local_variables())
        metric_names = sorted(v.name for v in g.get_collection(tf.GraphKeys.METRIC_VARIABLES))
        out = []
        with tf.Session(graph=g, config=config) as sess:
            sess.run(tf.local_variables_initializer())
            out.append(sess.run(value))
            for b in BATCHES:
                out.append(sess.run(update, {lab: b["labels"], sc: b["scores"], w: b["weights"]}))
                out.append(sess.run(value))
        return out, names, metric_names


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case):
    tf1 = require_tensorflow()
    ours, our_names, our_metric = _run(fm, CASES[case])
    theirs, their_names, their_metric = _run(tf1, CASES[case], session_config(tf1))
    assert our_names == their_names
    assert our_metric == their_metric
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_local_variables_initializer_restarts_the_stream():
    with fm.Graph().as_default():
        x = fm.placeholder(fm.float32, [None])
        value, update = fm.metrics.mean(x, metrics_collections=["m"], updates_collections=["u"])
        assert fm.get_collection("m") == [value] and fm.get_collection("u") == [update]
        assert not fm.trainable_variables() and not fm.global_variables()
        with fm.Session() as sess:
            sess.run(fm.local_variables_initializer())
            sess.run(update, {x: [1.0, 2.0]})
            assert sess.run(update, {x: [6.0]}) == pytest.approx(3.0)
            sess.run(fm.local_variables_initializer())
            assert sess.run(value) == 0.0
            assert sess.run(update, {x: [5.0]}) == pytest.approx(5.0)


def test_bad_input_names_shapes_and_options():
    with fm.Graph().as_default():
        with pytest.raises(fm.errors.InvalidArgumentError, match="not compatible"):
            fm.metrics.accuracy(fm.zeros([4, 3]), fm.zeros([4, 2]))
        with pytest.raises(fm.errors.InvalidArgumentError, match="same dtype"):
            fm.metrics.mean_squared_error(fm.zeros([4], fm.int32), fm.zeros([4]))
        with pytest.raises(fm.errors.InvalidArgumentError, match="Curve"):
            fm.metrics.auc(fm.zeros([4]), fm.zeros([4]), curve="XY")
        with pytest.raises(fm.errors.InvalidArgumentError, match="broadcast"):
            fm.metrics.mean(fm.zeros([4, 3]), weights=fm.ones([4, 2]))
