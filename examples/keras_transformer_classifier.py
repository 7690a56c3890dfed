"""Keras's "text classification with a Transformer" example, on synthetic token sequences.

    python examples/keras_transformer_classifier.py [--epochs 3]

Custom layers as the Keras guide writes them (``TokenAndPositionEmbedding`` and a
``TransformerBlock`` of ``MultiHeadAttention``, ``LayerNormalization``, ``Dropout`` and a
feed-forward ``Sequential``) in a functional model with ``GlobalAveragePooling1D``. The
task: do the two marker tokens 3 and 4 occur in the sequence (both, or only one of them)?
Prints the test accuracy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf

layers = tf.keras.layers
VOCAB, MAXLEN = 20, 12


class TransformerBlock(layers.Layer):
    """Self-attention and a feed-forward network, each with a residual and layer norm."""

    def __init__(self, embed_dim: int, num_heads: int, ff_dim: int, rate: float = 0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = tf.keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1, self.dropout2 = layers.Dropout(rate), layers.Dropout(rate)

    def call(self, inputs, training=None):
        attended = self.dropout1(self.att(inputs, inputs), training=training)
        out1 = self.layernorm1(inputs + attended)
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1), training=training))


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen: int, vocab_size: int, embed_dim: int):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        positions = self.pos_emb(tf.range(start=0, limit=tf.shape(x)[-1], delta=1))
        return self.token_emb(x) + positions


def make_data(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random tokens 6.. with marker 3 at a random place, and marker 4 too for label 1."""
    x = rng.integers(6, VOCAB, (count, MAXLEN))
    y = rng.integers(0, 2, count)
    for row, label in zip(x, y):
        i, j = rng.choice(MAXLEN, 2, replace=False)
        row[i] = 3
        if label:
            row[j] = 4
    return x.astype(np.int32), y


def build_model(embed_dim: int = 16, num_heads: int = 2, ff_dim: int = 32) -> tf.keras.Model:
    inputs = layers.Input(shape=(MAXLEN,), dtype="int32")
    x = TokenAndPositionEmbedding(MAXLEN, VOCAB, embed_dim)(inputs)
    x = TransformerBlock(embed_dim, num_heads, ff_dim)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(16, activation="relu")(x)
    return tf.keras.Model(inputs=inputs, outputs=layers.Dense(2, activation="softmax")(x))


def train(epochs: int = 3, seed: int = 0, verbose: int = 2) -> float:
    rng = np.random.default_rng(seed)
    (x_train, y_train), (x_test, y_test) = make_data(2000, rng), make_data(400, rng)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)  # fit's shuffling
        model = build_model()
        model.compile(tf.keras.optimizers.Adam(0.005), "sparse_categorical_crossentropy", metrics=["accuracy"])
        model.fit(x_train, y_train, batch_size=64, epochs=epochs, validation_split=0.1, verbose=verbose)
        _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy {accuracy:.4f}")
    return float(accuracy)


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.seed)


if __name__ == "__main__":
    main()
