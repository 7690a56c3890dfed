"""Keras's ``imdb_lstm.py`` (the Keras 2 examples): sentiment classification with an LSTM,
in TensorFlow 1.x graph mode, on synthetic reviews.

    python examples/keras_imdb_lstm.py [--epochs 2] [--imdb]

The published program: word-index sequences cut/padded to ``maxlen`` with
``sequence.pad_sequences``, ``Embedding(max_features, 128)``, ``LSTM(128, dropout=0.2,
recurrent_dropout=0.2)``, ``Dense(1, sigmoid)``, binary cross entropy with Adam. The
default data are synthetic reviews in IMDB's form (variable-length lists of word indices,
starting with 1, words from index 3; the label is whether more "positive" than "negative"
words occur, among neutral ones); ``--imdb`` reads IMDB from the Keras cache
(``~/.keras/datasets/imdb.npz``) as ``keras.datasets.imdb.load_data``. Prints the test
accuracy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf

keras = tf.keras
sequence = keras.preprocessing.sequence
Sequential = keras.models.Sequential
Dense, Embedding, LSTM = keras.layers.Dense, keras.layers.Embedding, keras.layers.LSTM
POSITIVE, NEGATIVE = range(3, 13), range(13, 23)  # word indices carrying the sentiment


def synthetic_reviews(count: int, max_features: int,
                      rng: np.random.Generator) -> tuple[list[list[int]], np.ndarray]:
    """IMDB-shaped reviews: a start token 1, 10-50 words, sentiment words among neutral
    ones; label 1 when positive words outnumber negative ones."""
    reviews, labels = [], []
    for _ in range(count):
        length = int(rng.integers(10, 50))
        words = rng.integers(23, max_features, length)
        label = int(rng.integers(0, 2))
        strong, weak = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        n_strong = int(rng.integers(3, 7))
        n_weak = int(rng.integers(0, n_strong - 1))
        places = rng.choice(length, n_strong + n_weak, replace=False)
        words[places[:n_strong]] = rng.choice(list(strong), n_strong)
        words[places[n_strong:]] = rng.choice(list(weak), n_weak)
        reviews.append([1, *words.tolist()])
        labels.append(label)
    return reviews, np.array(labels)


def train(epochs: int = 2, batch_size: int = 32, max_features: int = 20000, maxlen: int = 80, units: int = 128,
          imdb: bool = False, seed: int = 0, verbose: int = 2) -> float:
    """Trains the LSTM and returns its test accuracy."""
    print("Loading data...")
    if imdb:
        (x_train, y_train), (x_test, y_test) = keras.datasets.imdb.load_data(num_words=max_features)
    else:
        rng = np.random.default_rng(seed)
        (x_train, y_train), (x_test, y_test) = (synthetic_reviews(1000, max_features, rng),
                                                synthetic_reviews(300, max_features, rng))
    print(len(x_train), "train sequences")
    print(len(x_test), "test sequences")
    print("Pad sequences (samples x time)")
    x_train = sequence.pad_sequences(x_train, maxlen=maxlen)
    x_test = sequence.pad_sequences(x_test, maxlen=maxlen)
    print("x_train shape:", x_train.shape)
    print("x_test shape:", x_test.shape)
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)
        print("Build model...")
        model = Sequential()
        model.add(Embedding(max_features, 128))
        model.add(LSTM(units, dropout=0.2, recurrent_dropout=0.2))
        model.add(Dense(1, activation="sigmoid"))
        model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
        print("Train...")
        model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_data=(x_test, y_test),
                  verbose=verbose)
        score, acc = model.evaluate(x_test, y_test, batch_size=batch_size, verbose=0)
    print("Test score:", score)
    print("Test accuracy:", acc)
    return float(acc)


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-features", type=int, default=20000)
    parser.add_argument("--maxlen", type=int, default=80)
    parser.add_argument("--units", type=int, default=128, help="LSTM units")
    parser.add_argument("--imdb", action="store_true", help="IMDB from the Keras cache")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.batch, args.max_features, args.maxlen, args.units, args.imdb, args.seed)


if __name__ == "__main__":
    main()
