"""Keras idioms as new users write them: ``Sequential([Input(...), ...])``, a functional
model's ``output_shape``, and the metric names of TensorFlow 1.x graph mode (``acc``)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras


def test_sequential_starts_from_an_input_tensor():
    with tf.Graph().as_default():
        model = K.Sequential([K.Input(shape=(6,)), K.layers.Dense(3, activation="softmax")])
        assert [type(layer).__name__ for layer in model.layers] == ["Dense"]
        assert model.input_shape == (None, 6) and model.output_shape == (None, 3)
        assert model.get_config()["layers"][0]["class_name"] == "InputLayer"
        added = K.Sequential()
        added.add(K.Input(shape=(4,)))
        added.add(K.layers.Dense(2))
        assert added.output_shape == (None, 2)
        assert added.predict(np.ones((5, 4), np.float32)).shape == (5, 2)
        with pytest.raises(TypeError, match="must be an instance of class Layer"):
            K.Sequential([tf.constant([1.0])])


def test_functional_model_shapes_before_and_after_another_call():
    with tf.Graph().as_default():
        x = K.Input((4,))
        model = K.Model(x, K.layers.Dense(2)(x))
        assert model.output_shape == (None, 2) and model.input_shape == (None, 4)
        assert model.output is model.outputs[0] and model.input is model.inputs[0]
        model(K.Input((4,)))
        assert model.output_shape == (None, 2)
        two = K.Model(x, [K.layers.Dense(1)(x), K.layers.Dense(5)(x)])
        assert two.output_shape == [(None, 1), (None, 5)]


# Measured with tf-keras 2.21 under tf.compat.v1.disable_v2_behavior() (TensorFlow 1.x graph
# mode): compile(metrics, weighted_metrics) -> model.metrics_names.
V1_NAMES = [
    (["accuracy", "acc"], ["accuracy"], ["loss", "acc", "weighted_acc"]),
    (["mae", "mse", "ce", "crossentropy", "sparse_categorical_crossentropy", "top_k_categorical_accuracy"],
     None, ["loss", "mean_absolute_error", "mean_squared_error", "ce", "sparse_categorical_crossentropy",
            "top_k_categorical_accuracy"]),
    ("objects", ["mse"], ["loss", "sca", "mean_squared_error", "weighted_mean_squared_error"]),
]


@pytest.mark.parametrize("metrics,weighted,names", V1_NAMES)
def test_metric_names_are_tensorflow_1_names(metrics, weighted, names):
    rng = np.random.default_rng(0)
    x, y, sw = rng.random((12, 4), np.float32), rng.integers(0, 3, 12), rng.random(12)
    with tf.Graph().as_default():
        if metrics == "objects":
            metrics = [K.metrics.SparseCategoricalAccuracy(name="sca"), K.metrics.MeanSquaredError()]
        model = K.Sequential([K.Input(shape=(4,)), K.layers.Dense(3, activation="softmax")])
        model.compile("sgd", "sparse_categorical_crossentropy", metrics=metrics, weighted_metrics=weighted)
        history = model.fit(x, y, epochs=1, verbose=0, sample_weight=sw, validation_data=(x, y, sw)).history
        assert model.metrics_names == names
        assert sorted(history) == sorted(names + ["val_" + n for n in names])


def test_multi_output_metric_names_are_prefixed_per_output():
    rng = np.random.default_rng(0)
    x, y, r = rng.random((12, 4), np.float32), rng.integers(0, 3, 12), rng.random((12, 1), np.float32)
    with tf.Graph().as_default():
        inputs = K.Input((4,))
        model = K.Model(inputs, [K.layers.Dense(3, activation="softmax", name="cls")(inputs),
                                 K.layers.Dense(1, name="reg")(inputs)])
        model.compile("sgd", ["sparse_categorical_crossentropy", "mse"], metrics=["accuracy"],
                      weighted_metrics=["acc"])
        assert model.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc", "cls_weighted_acc", "reg_acc",
                                       "reg_weighted_acc"]
        model.compile("sgd", ["sparse_categorical_crossentropy", "mse"],
                      metrics={"cls": ["accuracy"], "reg": ["mae"]})
        history = model.fit(x, [y, r], epochs=1, verbose=0).history
        assert sorted(history) == ["cls_acc", "cls_loss", "loss", "reg_loss", "reg_mean_absolute_error"]


def _two_outputs(keras, weights=None):
    inputs = keras.Input((4,))
    model = keras.Model(inputs, [keras.layers.Dense(3, activation="softmax", name="cls")(inputs),
                                 keras.layers.Dense(1, name="reg")(inputs)])
    model.compile(keras.optimizers.legacy.SGD(0.1), ["sparse_categorical_crossentropy", "mse"],
                  loss_weights=[1.0, 0.5], metrics={"cls": ["accuracy"]})
    if weights is not None:
        model.set_weights(weights)
    return model


@pytest.mark.oracle
def test_output_losses_follow_tf_keras():
    """Each output's loss is its unweighted loss averaged over the batches (a last, smaller
    batch weighs as much as the others), the total loss a mean over the samples."""
    from flowmesh.testing.keras_oracle import require_tf_keras, v1_metric_names

    tf1, tf_keras = require_tf_keras()
    rng = np.random.default_rng(0)
    x, y, r = rng.random((10, 4), np.float32), rng.integers(0, 3, 10), rng.random((10, 1), np.float32)
    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        theirs = _two_outputs(tf_keras)
        weights = theirs.get_weights()
        expected = theirs.fit(x, [y, r], batch_size=4, epochs=2, shuffle=False, verbose=0,
                              validation_data=(x, [y, r])).history
        expected_eval = theirs.evaluate(x, [y, r], batch_size=4, verbose=0)
    with tf.Graph().as_default():
        ours = _two_outputs(K, weights)
        got = ours.fit(x, [y, r], batch_size=4, epochs=2, shuffle=False, verbose=0,
                       validation_data=(x, [y, r])).history
        got_eval = ours.evaluate(x, [y, r], batch_size=4, verbose=0)
        assert ours.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc"]
    expected = v1_metric_names(expected, outputs=("cls", "reg"))
    assert sorted(got) == sorted(expected)
    # val_cls_loss / val_reg_loss: flowmesh gives evaluate's values (a mean over the
    # validation batches); tf-keras's graph-mode fit reports other numbers there, which
    # match neither its evaluate nor any batching of the validation data.
    for key in [k for k in expected if k not in ("val_cls_loss", "val_reg_loss")]:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(got_eval, expected_eval, rtol=1e-5)


def test_output_losses_under_mirrored_strategy_equal_one_device():
    rng = np.random.default_rng(1)
    x, y, r = rng.random((16, 4), np.float32), rng.integers(0, 3, 16), rng.random((16, 1), np.float32)
    with tf.Graph().as_default():
        model = _two_outputs(K)
        weights = model.get_weights()
        expected = model.fit(x, [y, r], batch_size=8, epochs=2, shuffle=False, verbose=0).history
    with tf.Graph().as_default():
        with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
            model = _two_outputs(K, weights)
        got = model.fit(x, [y, r], batch_size=8, epochs=2, shuffle=False, verbose=0).history
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_a_functional_model_deeper_than_the_recursion_limit_builds_and_runs():
    import sys

    depth = sys.getrecursionlimit() + 200
    x = tf.keras.Input(shape=(3,))
    h = x
    for _ in range(depth):
        h = tf.keras.layers.Activation("linear")(h)
    model = tf.keras.Model(x, h)
    assert len(model.layers) == depth + 1 and model.output_shape == (None, 3)
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(model.predict(values), values)
