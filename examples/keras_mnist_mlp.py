"""Keras's ``mnist_mlp.py`` (the Keras 2 examples): a multilayer perceptron on MNIST, in
TensorFlow 1.x graph mode.

    python examples/keras_mnist_mlp.py [--epochs 20] [--mnist]

The published program: images flattened to 784 floats, ``Dense(512, relu)``,
``Dropout(0.2)``, ``Dense(512, relu)``, ``Dropout(0.2)``, ``Dense(10, softmax)``, RMSprop,
categorical cross entropy, ``fit(..., validation_data=(x_test, y_test))``, and the
TensorFlow 1.x history keys it prints (``acc``, ``val_acc``). The data are the 8x8 digits
in MNIST's form unless ``--mnist`` (MNIST from the Keras cache). Prints the test accuracy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_mnist_like

keras = tf.keras
Sequential = keras.models.Sequential
Dense, Dropout = keras.layers.Dense, keras.layers.Dropout
RMSprop = keras.optimizers.RMSprop
num_classes = 10


def train(epochs: int = 20, batch_size: int = 128, mnist: bool = False, seed: int = 0,
          verbose: int = 2) -> tuple[float, dict]:
    """Trains the MLP; returns the test accuracy and the ``History``'s dict."""
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data() if mnist else load_mnist_like()
    x_train = x_train.reshape(len(x_train), 784).astype("float32") / 255
    x_test = x_test.reshape(len(x_test), 784).astype("float32") / 255
    print(x_train.shape[0], "train samples")
    print(x_test.shape[0], "test samples")
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)
        model = Sequential()
        model.add(Dense(512, activation="relu", input_shape=(784,)))
        model.add(Dropout(0.2))
        model.add(Dense(512, activation="relu"))
        model.add(Dropout(0.2))
        model.add(Dense(num_classes, activation="softmax"))
        model.summary()
        model.compile(loss="categorical_crossentropy", optimizer=RMSprop(), metrics=["accuracy"])
        history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=verbose,
                            validation_data=(x_test, y_test))
        score = model.evaluate(x_test, y_test, verbose=0)
    print("Test loss:", score[0])
    print("Test accuracy:", score[1])
    print("last val_acc:", history.history["val_acc"][-1])
    return float(score[1]), history.history


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--mnist", action="store_true", help="MNIST from the Keras cache")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.batch, args.mnist, args.seed)[0]


if __name__ == "__main__":
    main()
