"""Keras's "Simple MNIST convnet" (keras.io/examples/vision/mnist_convnet), in graph mode.

    python examples/keras_mnist_convnet.py [--epochs 15] [--mnist]

The published program: two ``Conv2D``/``MaxPooling2D`` blocks, ``Flatten``, ``Dropout(0.5)``
and a softmax ``Dense``, trained with Adam on one-hot labels (``to_categorical``) with
``validation_split=0.1``. By default the data are the 8x8 digits in MNIST's form
(``flowmesh.datasets.load_mnist_like``: 28x28 uint8 images); ``--mnist`` reads MNIST from
the Keras cache (``~/.keras/datasets/mnist.npz``) as ``keras.datasets.mnist.load_data()``.
Prints the test accuracy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_mnist_like

keras = tf.keras
layers = tf.keras.layers
num_classes = 10
input_shape = (28, 28, 1)


def build_model() -> keras.Model:
    return keras.Sequential([
        keras.Input(shape=input_shape),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ])


def train(epochs: int = 15, batch_size: int = 128, mnist: bool = False, seed: int = 0, verbose: int = 2) -> float:
    """Trains the convnet and returns its test accuracy."""
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data() if mnist else load_mnist_like()
    # Scale images to the [0, 1] range and make sure images have shape (28, 28, 1)
    x_train = np.expand_dims(x_train.astype("float32") / 255, -1)
    x_test = np.expand_dims(x_test.astype("float32") / 255, -1)
    print("x_train shape:", x_train.shape, f"({x_train.shape[0]} train samples, {x_test.shape[0]} test samples)")
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)
        model = build_model()
        model.summary()
        model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
        model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1, verbose=verbose)
        score = model.evaluate(x_test, y_test, verbose=0)
    print("Test loss:", score[0])
    print("Test accuracy:", score[1])
    return float(score[1])


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--mnist", action="store_true", help="MNIST from the Keras cache")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.batch, args.mnist, args.seed)


if __name__ == "__main__":
    main()
