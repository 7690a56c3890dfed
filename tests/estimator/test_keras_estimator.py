"""tf.keras.estimator.model_to_estimator: the Estimator starts from the Keras weights, trains
with the compiled loss/optimizer and reports the compiled metrics."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.datasets import load_digits

(X_TRAIN, Y_TRAIN), (X_TEST, Y_TEST) = load_digits()


def _model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu", input_shape=(64,)),
                                 tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def test_model_to_estimator_trains_from_the_keras_weights(tmp_path):
    model = _model()
    keras_probs = model.predict(X_TEST[:4])
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path),
                                                config=tf.estimator.RunConfig(log_step_count_steps=0))
    name = model.input_names[0]
    first = list(est.predict(lambda: {name: tf.constant(X_TEST[:4])}))
    np.testing.assert_allclose([p[model.output_names[0]] for p in first], keras_probs, rtol=1e-5, atol=1e-6)

    def train_fn():
        return tf.data.Dataset.from_tensor_slices(({name: X_TRAIN}, Y_TRAIN)).shuffle(500, seed=0).repeat().batch(64)

    est.train(train_fn, steps=150)
    result = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({name: X_TEST}, Y_TEST)).batch(200))
    assert set(result) == {"loss", "acc", "global_step"}  # TF 1.x names: acc
    assert result["acc"] > 0.9 and result["global_step"] == 150


def test_model_to_estimator_needs_a_compiled_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="compile"):
        tf.keras.estimator.model_to_estimator(keras_model=model)
