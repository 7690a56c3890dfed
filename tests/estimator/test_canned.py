"""Canned estimators reach stated metrics on the digits and on synthetic data, with
TensorFlow's variable names, prediction keys and metric keys."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.datasets import load_digits

(X_TRAIN, Y_TRAIN), (X_TEST, Y_TEST) = load_digits()
PIXELS = [tf.feature_column.numeric_column("x", shape=(64,))]
RNG = np.random.default_rng(1)
XS = RNG.standard_normal((300, 3)).astype(np.float32)
YS = (XS @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 1.0).astype(np.float32)
COLUMNS = [tf.feature_column.numeric_column("a", shape=(3,))]


def _input(x, y, key="x"):
    return lambda: ({key: tf.constant(x)}, tf.constant(y))


def _config():
    # A fixed seed: from some draws a 4-unit ReLU layer dies (1 run in 10 reached 0.75).
    return tf.estimator.RunConfig(log_step_count_steps=0, save_summary_steps=0, tf_random_seed=1)


@pytest.mark.parametrize("make, steps", [
    (lambda d: tf.estimator.DNNClassifier([32], PIXELS, model_dir=d, n_classes=10, optimizer="Adam",
                                          config=_config()), 80),
    (lambda d: tf.estimator.LinearClassifier(PIXELS, model_dir=d, n_classes=10, config=_config()), 80),
    (lambda d: tf.estimator.DNNLinearCombinedClassifier(
        model_dir=d, linear_feature_columns=PIXELS, dnn_feature_columns=PIXELS, dnn_hidden_units=[16],
        n_classes=10, dnn_optimizer="Adam", config=_config()), 60),
], ids=["dnn", "linear", "dnn_linear_combined"])
def test_classifiers_learn_the_digits(tmp_path, make, steps):
    est = make(str(tmp_path))
    est.train(_input(X_TRAIN, Y_TRAIN), steps=steps)
    result = est.evaluate(_input(X_TEST, Y_TEST))
    assert result["accuracy"] > 0.9, result
    assert set(result) == {"accuracy", "average_loss", "loss", "global_step"}
    pred = next(est.predict(lambda: {"x": tf.constant(X_TEST[:4])}))
    assert set(pred) == {"logits", "probabilities", "class_ids", "classes", "all_class_ids", "all_classes"}
    assert pred["probabilities"].shape == (10,) and pred["classes"][0] == str(pred["class_ids"][0]).encode()


def test_variable_names_are_tensorflows(tmp_path):
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=COLUMNS, dnn_feature_columns=COLUMNS,
        dnn_hidden_units=[4, 3], config=_config())
    est.train(_input(XS, (YS > 1).astype(np.int64), "a"), steps=1)
    names = {n for n in est.get_variable_names() if "Adagrad" not in n and "Ftrl" not in n}
    assert names == {"global_step", "dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias",
                     "dnn/hiddenlayer_1/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel",
                     "dnn/logits/bias", "linear/linear_model/a/weights",
                     "linear/linear_model/bias_weights"}
    assert est.get_variable_value("dnn/logits/kernel").shape == (3, 1)


def test_binary_linear_classifier_metrics(tmp_path):
    labels = (YS > 1.0).astype(np.int64)
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path), config=_config())
    est.train(_input(XS, labels, "a"), steps=60)
    result = est.evaluate(_input(XS, labels, "a"))
    assert result["auc"] > 0.97 and result["accuracy"] > 0.9, result
    assert {"accuracy_baseline", "auc_precision_recall", "label/mean", "prediction/mean",
            "precision", "recall"} < set(result)
    pred = next(est.predict(lambda: {"a": tf.constant(XS[:1])}))
    assert {"logistic", "probabilities", "class_ids"} < set(pred)
    assert pred["probabilities"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("make", [
    lambda d: tf.estimator.LinearRegressor(COLUMNS, model_dir=d, optimizer="Adam", config=_config()),
    lambda d: tf.estimator.DNNRegressor([8], COLUMNS, model_dir=d, optimizer="Adam", config=_config()),
], ids=["linear", "dnn"])
def test_regressors_fit_a_linear_target(tmp_path, make):
    est = make(str(tmp_path))
    est.train(_input(XS, YS, "a"), steps=250)
    result = est.evaluate(_input(XS, YS, "a"))
    assert result["average_loss"] < 0.1, result
    assert result["label/mean"] == pytest.approx(float(YS.mean()), rel=1e-4)
    pred = next(est.predict(lambda: {"a": tf.constant(XS[:1])}))
    assert set(pred) == {"predictions"} and pred["predictions"] == pytest.approx(YS[0], abs=0.5)


def test_baselines_learn_the_prior(tmp_path):
    reg = tf.estimator.BaselineRegressor(model_dir=str(tmp_path / "r"), config=_config(),
                                         optimizer=tf.train.GradientDescentOptimizer(0.001))
    reg.train(_input(XS, YS, "a"), steps=200)
    assert reg.get_variable_value("baseline/bias")[0] == pytest.approx(float(YS.mean()), abs=0.05)
    cls = tf.estimator.BaselineClassifier(model_dir=str(tmp_path / "c"), n_classes=3, config=_config())
    labels = np.array([0] * 60 + [1] * 30 + [2] * 10, np.int64)
    cls.train(_input(np.zeros((100, 3), np.float32), labels, "a"), steps=100)
    probs = next(cls.predict(lambda: {"a": tf.zeros([1, 3])}))["probabilities"]
    np.testing.assert_allclose(probs, [0.6, 0.3, 0.1], atol=0.05)


def test_label_vocabulary_and_wrong_label_dtype(tmp_path):
    words = np.array([b"neg", b"pos"], object)[(YS[:, 0] > 1).astype(int)]
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path / "v"), label_vocabulary=["neg", "pos"],
                                        config=_config())
    est.train(_input(XS, words, "a"), steps=30)
    assert est.evaluate(_input(XS, words, "a"))["accuracy"] > 0.85
    assert next(est.predict(lambda: {"a": tf.constant(XS[:1])}))["classes"][0] in (b"neg", b"pos")
    bad = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path / "b"), config=_config())
    with pytest.raises(tf.errors.InvalidArgumentError, match="integer class ids.*float32.*'train'"):
        bad.train(_input(XS, YS, "a"), steps=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="column 'a' needs the feature 'a'.*mode 'train'"):
        tf.estimator.DNNClassifier([2], COLUMNS, model_dir=str(tmp_path / "m"), config=_config()).train(
            _input(XS, (YS > 1).astype(np.int64), "b"), steps=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported optimizer name 'Adamw'"):
        tf.estimator.DNNClassifier([2], COLUMNS, model_dir=str(tmp_path / "o"), optimizer="Adamw",
                                   config=_config()).train(_input(XS, (YS > 1).astype(np.int64), "a"), steps=1)


def test_dnn_classifier_through_tf_data(tmp_path):
    def train_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": X_TRAIN}, Y_TRAIN))
        return data.shuffle(500, seed=1).repeat().batch(64)

    def eval_fn():   # finite: evaluation runs until the dataset is exhausted
        return tf.data.Dataset.from_tensor_slices(({"x": X_TEST}, Y_TEST)).batch(100)

    est = tf.estimator.DNNClassifier([32], PIXELS, model_dir=str(tmp_path), n_classes=10,
                                     optimizer="Adam", config=_config())
    est.train(train_fn, steps=120)
    assert est.evaluate(eval_fn)["accuracy"] > 0.9
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X_TEST[:150]}).batch(64)))
    assert len(preds) == 150
    assert np.mean([p["class_ids"][0] == y for p, y in zip(preds, Y_TEST)]) > 0.9


def test_loss_reduction(tmp_path):
    def make(reduction, name):
        return tf.estimator.LinearRegressor(COLUMNS, model_dir=str(tmp_path / name), config=_config(),
                                            loss_reduction=reduction)

    summed = make(None, "sum").evaluate(_input(XS, YS, "a"))            # zero weights: loss = sum(y^2)
    mean = make(tf.losses.Reduction.SUM_OVER_BATCH_SIZE, "mean").evaluate(_input(XS, YS, "a"))
    assert summed["loss"] == pytest.approx(float((YS ** 2).sum()), rel=1e-5)
    assert mean["loss"] == pytest.approx(float((YS ** 2).mean()), rel=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="loss_reduction"):
        make(tf.losses.Reduction.NONE, "none")


def test_partitioned_linear_and_dnn_input_layers(tmp_path):
    words = np.array([b"a", b"b", b"c", b"d"], object)[np.arange(100) % 4][:, None]
    labels = (words[:, 0] != b"a").astype(np.int64)
    col = tf.feature_column.categorical_column_with_vocabulary_list("w", ["a", "b", "c", "d"])

    def input_fn():
        return {"w": tf.constant(words)}, tf.constant(labels)

    linear = tf.estimator.LinearClassifier([col], model_dir=str(tmp_path / "l"), config=_config(),
                                           partitioner=tf.fixed_size_partitioner(2))
    linear.train(input_fn, steps=40)
    assert linear.evaluate(input_fn)["accuracy"] == 1.0
    assert linear.get_variable_value("linear/linear_model/w/weights").shape == (4, 1)
    dnn = tf.estimator.DNNClassifier([4], [tf.feature_column.embedding_column(col, 3)], optimizer="Adam",
                                     model_dir=str(tmp_path / "d"), config=_config(),
                                     input_layer_partitioner=tf.fixed_size_partitioner(2))
    dnn.train(input_fn, steps=60)
    assert dnn.evaluate(input_fn)["accuracy"] == 1.0
