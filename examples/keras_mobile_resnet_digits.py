"""A ResNet/MobileNet-style functional model on the handwritten digits.

    python examples/keras_mobile_resnet_digits.py [--epochs 6]

The blocks of Keras's application models, small: ``ZeroPadding2D`` + strided ``Conv2D``,
``BatchNormalization`` (momentum 0.9: the moving statistics settle within the few steps of this run) and ``ReLU(6.)``, inverted residual blocks with ``DepthwiseConv2D``
and a projection, ``Add`` shortcuts, ``SeparableConv2D``, ``GlobalAveragePooling2D``.
Prints the test accuracy (>= 0.9 after a few epochs on 2 CPU cores).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_digits

layers = tf.keras.layers


def inverted_residual(x, expansion: int, filters: int, stride: int, name: str):
    """MobileNetV2's block: expand (1x1), depthwise 3x3, project (1x1); a shortcut when the
    shape is kept."""
    channels = x.shape[-1]
    h = layers.Conv2D(channels * expansion, 1, use_bias=False, name=f"{name}_expand")(x)
    h = layers.ReLU(6.0)(layers.BatchNormalization(momentum=0.9, name=f"{name}_expand_bn")(h))
    if stride == 2:
        h = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"{name}_pad")(h)
    h = layers.DepthwiseConv2D(3, strides=stride, padding="same" if stride == 1 else "valid", use_bias=False,
                               name=f"{name}_depthwise")(h)
    h = layers.ReLU(6.0)(layers.BatchNormalization(momentum=0.9, name=f"{name}_depthwise_bn")(h))
    h = layers.BatchNormalization(momentum=0.9, name=f"{name}_project_bn")(
        layers.Conv2D(filters, 1, use_bias=False, name=f"{name}_project")(h))
    return layers.Add(name=f"{name}_add")([x, h]) if stride == 1 and channels == filters else h


def build_model() -> tf.keras.Model:
    inputs = layers.Input((8, 8, 1))
    x = layers.ZeroPadding2D(1, name="stem_pad")(inputs)
    x = layers.Conv2D(16, 3, use_bias=False, name="stem_conv")(x)
    x = layers.ReLU(6.0)(layers.BatchNormalization(momentum=0.9, name="stem_bn")(x))
    x = inverted_residual(x, 2, 16, 1, "block1")
    x = inverted_residual(x, 2, 24, 2, "block2")
    x = layers.SeparableConv2D(32, 3, padding="same", activation="relu", name="separable")(x)
    x = layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, layers.Dense(10, activation="softmax")(x), name="mobile_resnet")


def train(epochs: int = 6, seed: int = 0, verbose: int = 2) -> float:
    (x_train, y_train), (x_test, y_test) = load_digits(flatten=False)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)  # fit's shuffling
        model = build_model()
        model.compile(tf.keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
        model.fit(x_train, y_train, batch_size=64, epochs=epochs, verbose=verbose)
        _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy {accuracy:.4f}")
    return float(accuracy)


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.seed)


if __name__ == "__main__":
    main()
