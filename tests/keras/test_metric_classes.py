"""``tf.keras.metrics`` classes against tf-keras (graph mode): the same values after two
batches (with sample weights), reset, configs; and accumulating metrics inside ``fit``."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_keras

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(6)
Y = RNG.integers(0, 2, (8, 3)).astype(np.float32)
P = RNG.uniform(0, 1, (8, 3)).astype(np.float32)
W = RNG.uniform(0, 2, (8,)).astype(np.float32)
LABELS = RNG.integers(0, 4, (8,)).astype(np.int64)
SCORES = RNG.uniform(0, 1, (8, 4)).astype(np.float32)
REG = RNG.standard_normal((8, 2)).astype(np.float32)
REG_P = (REG + RNG.standard_normal((8, 2)) * 0.5).astype(np.float32)

CASES = {
    "auc_roc": (lambda m: m.AUC(num_thresholds=20), Y, P),
    "auc_pr": (lambda m: m.AUC(num_thresholds=30, curve="PR"), Y, P),
    "auc_pr_majoring": (lambda m: m.AUC(curve="PR", summation_method="majoring"), Y, P),
    "auc_minoring": (lambda m: m.AUC(summation_method="minoring", thresholds=[0.2, 0.5, 0.7]), Y, P),
    "auc_multi_label": (lambda m: m.AUC(num_thresholds=10, multi_label=True, label_weights=[1.0, 2.0, 0.5]), Y, P),
    "auc_logits": (lambda m: m.AUC(from_logits=True), Y, P * 4 - 2),
    "precision": (lambda m: m.Precision(), Y, P),
    "precision_thresholds": (lambda m: m.Precision(thresholds=[0.3, 0.6]), Y, P),
    "precision_top_k": (lambda m: m.Precision(top_k=2), Y, P),
    "recall_class_id": (lambda m: m.Recall(class_id=1), Y, P),
    "true_positives": (lambda m: m.TruePositives(thresholds=[0.1, 0.5, 0.9]), Y, P),
    "false_positives": (lambda m: m.FalsePositives(), Y, P),
    "true_negatives": (lambda m: m.TrueNegatives(0.3), Y, P),
    "false_negatives": (lambda m: m.FalseNegatives(), Y, P),
    "sensitivity_at_specificity": (lambda m: m.SensitivityAtSpecificity(0.5, num_thresholds=50), Y, P),
    "specificity_at_sensitivity": (lambda m: m.SpecificityAtSensitivity(0.6), Y, P),
    "precision_at_recall": (lambda m: m.PrecisionAtRecall(0.4, num_thresholds=30), Y, P),
    "recall_at_precision": (lambda m: m.RecallAtPrecision(0.5), Y, P),
    "mean_iou": (lambda m: m.MeanIoU(num_classes=4), LABELS, np.argmax(SCORES, -1)),
    "iou": (lambda m: m.IoU(4, target_class_ids=[0, 2]), LABELS, np.argmax(SCORES, -1)),
    "binary_iou": (lambda m: m.BinaryIoU(threshold=0.4), Y[:, 0], P[:, 0]),
    "one_hot_mean_iou": (lambda m: m.OneHotMeanIoU(4), np.eye(4, dtype=np.float32)[LABELS], SCORES),
    "one_hot_iou": (lambda m: m.OneHotIoU(4, [1, 3]), np.eye(4, dtype=np.float32)[LABELS], SCORES),
    "rmse": (lambda m: m.RootMeanSquaredError(), REG, REG_P),
    "mean_relative_error": (lambda m: m.MeanRelativeError(normalizer=[1.0, 2.0]), REG, REG_P),
    "binary_accuracy": (lambda m: m.BinaryAccuracy(threshold=0.3), Y, P),
    "categorical_accuracy": (lambda m: m.CategoricalAccuracy(), np.eye(4, dtype=np.float32)[LABELS], SCORES),
    "sparse_top_k": (lambda m: m.SparseTopKCategoricalAccuracy(k=2), LABELS, SCORES),
    "hinge": (lambda m: m.Hinge(), Y, P),
    "squared_hinge": (lambda m: m.SquaredHinge(), Y, P),
    "categorical_hinge": (lambda m: m.CategoricalHinge(), Y, P),
    "kl_divergence": (lambda m: m.KLDivergence(), Y, P),
    "poisson": (lambda m: m.Poisson(), Y, P),
    "log_cosh": (lambda m: m.LogCoshError(), REG, REG_P),
    "cosine_similarity": (lambda m: m.CosineSimilarity(), REG, REG_P),
    "mape": (lambda m: m.MeanAbsolutePercentageError(), REG, REG_P),
    "msle": (lambda m: m.MeanSquaredLogarithmicError(), Y, P),
    "mean": (lambda m: m.Mean(), None, P),
    "sum": (lambda m: m.Sum(), None, P),
    "mean_tensor": (lambda m: m.MeanTensor(), None, P),
}


def _run(lib, metrics, make, y, p):
    with lib.Graph().as_default() as graph:
        metric = make(metrics)
        halves = [slice(0, 4), slice(4, 8)]
        ops = []
        for i, half in enumerate(halves):
            weight = W[half] if i == 1 else None
            args = (p[half],) if y is None else (y[half], p[half])
            ops.append(metric.update_state(*args, sample_weight=weight))
        result = metric.result()
        with lib.Session(graph=graph) as sess:
            sess.run(lib.variables_initializer(metric.variables))
            for op in ops:
                sess.run(op)
            value = sess.run(result)
            sess.run([v.initializer for v in metric.variables])
            reset = sess.run(result)
        return value, reset, metric.get_config()


@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_class_matches_tf_keras(case):
    tf1, tf_keras = require_tf_keras()
    make, y, p = CASES[case]
    theirs, their_reset, their_config = _run(tf1, tf_keras.metrics, make, y, p)
    ours, our_reset, our_config = _run(tf, tf.keras.metrics, make, y, p)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(our_reset, their_reset, rtol=1e-5, atol=1e-6)
    from flowmesh.testing.keras_oracle import _plain

    theirs_config, ours_config = _plain(their_config), _plain(our_config)
    assert ours_config == theirs_config, (ours_config, theirs_config)


def _ours(make, y, p):
    return _run(tf, tf.keras.metrics, make, y, p)[0]


def test_r2_score_matches_its_definition():
    """tf-keras's R2Score runs only eagerly; checked against the formula (sklearn's r2_score)."""
    weights = np.concatenate([np.ones(4, np.float32), W[4:]])[:, None]
    mean = (REG * weights).sum(0) / weights.sum()
    residual = (weights * (REG - REG_P) ** 2).sum(0)
    total = (weights * (REG - mean) ** 2).sum(0)
    raw = 1 - residual / total
    np.testing.assert_allclose(_ours(lambda m: m.R2Score(), REG, REG_P), raw.mean(), rtol=1e-4)
    weighted = (total * raw).sum() / total.sum()
    adjusted = 1 - (1 - weighted) * (REG.size - 1) / (REG.size - 1 - 1)
    np.testing.assert_allclose(_ours(lambda m: m.R2Score("variance_weighted_average", num_regressors=1), REG,
                                     REG_P), adjusted, rtol=1e-4)


def _fbeta(y, pred, beta, average, weights):
    tp = (pred * y * weights).sum(0)
    fp = (pred * (1 - y) * weights).sum(0)
    fn = ((1 - pred) * y * weights).sum(0)
    if average == "micro":
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    precision, recall = tp / np.maximum(tp + fp, 1e-12), tp / np.maximum(tp + fn, 1e-12)
    score = (1 + beta**2) * precision * recall / np.maximum(beta**2 * precision + recall, 1e-12)
    if average == "weighted":
        support = (y * weights).sum(0)
        return (score * support / support.sum()).sum()
    return score.mean() if average else score


def test_fbeta_scores_match_their_definition():
    """tf-keras's F-scores run only eagerly; checked against the formula."""
    weights = np.concatenate([np.ones(4, np.float32), W[4:]])[:, None]
    one_hot = np.eye(4, dtype=np.float32)[LABELS]
    argmax = (SCORES == SCORES.max(-1, keepdims=True)).astype(np.float32)
    np.testing.assert_allclose(_ours(lambda m: m.F1Score(average="macro"), one_hot, SCORES),
                               _fbeta(one_hot, argmax, 1.0, "macro", weights), rtol=1e-5)
    np.testing.assert_allclose(_ours(lambda m: m.FBetaScore("weighted", beta=2.0, threshold=0.5), Y, P),
                               _fbeta(Y, (P > 0.5).astype(np.float32), 2.0, "weighted", weights), rtol=1e-5)
    np.testing.assert_allclose(_ours(lambda m: m.F1Score(average="micro", threshold=0.4), Y, P),
                               _fbeta(Y, (P > 0.4).astype(np.float32), 1.0, "micro", weights), rtol=1e-5)


def test_accumulating_metrics_in_fit_follow_tf_keras():
    """AUC and Precision over an epoch (accumulated, not averaged per batch), reset for
    validation and evaluation."""
    tf1, tf_keras = require_tf_keras()
    x = RNG.standard_normal((40, 4)).astype(np.float32)
    y = (x[:, :1] + 0.3 * RNG.standard_normal((40, 1)) > 0).astype(np.float32)
    kernel = RNG.standard_normal((4, 1)).astype(np.float32) * 0.3

    def run(keras):
        model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
        model.set_weights([kernel, np.zeros(1, np.float32)])
        model.compile(keras.optimizers.legacy.SGD(0.5), "binary_crossentropy",
                      metrics=[keras.metrics.AUC(num_thresholds=50), keras.metrics.Precision(name="prec")])
        history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                            validation_data=(x[:20], y[:20])).history
        return history, model.evaluate(x, y, batch_size=16, verbose=0)

    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        expected, expected_eval = run(tf_keras)
    with tf.Graph().as_default():
        got, got_eval = run(tf.keras)
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6, err_msg=key)
    np.testing.assert_allclose(got_eval, expected_eval, rtol=1e-4, atol=1e-6)


def test_metric_objects_round_trip_through_hdf5(tmp_path):
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid", input_shape=(2,))])
        model.compile("sgd", "binary_crossentropy", metrics=["accuracy", tf.keras.metrics.AUC(name="auc")])
        model.save(str(tmp_path / "m.h5"))
    with tf.Graph().as_default():
        loaded = tf.keras.models.load_model(str(tmp_path / "m.h5"))
        assert loaded.metrics_names == ["loss", "acc", "auc"]
        loaded.fit(np.ones((4, 2), np.float32), np.array([[0.0], [1.0], [1.0], [0.0]], np.float32), verbose=0)
