"""The seeds' Keras CNN example trains briefly to a useful accuracy and saves a loadable model."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_digits


def test_short_training_learns_and_saves(example, tmp_path, capsys) -> None:
    cnn = example("keras_digits_cnn")
    path = str(tmp_path / "cnn.h5")
    accuracy = cnn.main(["--epochs", "3", "--batch", "128", "--lr", "0.006", "--save", path])
    out = capsys.readouterr().out
    assert accuracy >= 0.85, out
    assert "Epoch 3/3" in out and f"test accuracy {accuracy:.4f}" in out
    (_, _), (x_test, y_test) = load_digits(flatten=False)
    with tf.Graph().as_default():
        model = tf.keras.models.load_model(path)
        predicted = model.predict(x_test).argmax(1)
        assert abs(np.mean(predicted == y_test) - accuracy) < 1e-6
