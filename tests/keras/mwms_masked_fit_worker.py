"""One worker of the masked Keras MultiWorkerMirroredStrategy fit test (started with its
TF_CONFIG); also the data and models of tests/keras/test_distributed_masked_fit.py."""

from __future__ import annotations

import json

import numpy as np

import flowmesh as tf


def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """16 padded sequences of 5 steps: ids (0 = padding), float steps (zeros = padding),
    sparse targets and temporal weights. The first batch's halves hold 14 and 17 real ids."""
    rng = np.random.default_rng(11)
    ids = rng.integers(1, 7, (16, 5)).astype(np.int32)
    for row, length in {0: 3, 1: 1, 5: 2, 9: 4, 10: 0, 12: 2, 15: 3}.items():
        ids[row, length:] = 0
    x = rng.standard_normal((16, 5, 3)).astype(np.float32)
    x[ids == 0] = 0.0
    x[3, 1] = 0.0  # a masked step in the middle
    y = rng.integers(0, 3, (16, 5, 1)).astype(np.float32)
    temporal = rng.uniform(0.0, 2.0, (16, 5)).astype(np.float32)
    return ids, x, y, temporal


def make_model(lib, case: str, mode: str | None = None):
    k = lib.keras.layers
    head = [k.Embedding(7, 3, mask_zero=True, input_length=5)] if case == "mask_zero" else \
        [k.InputLayer((5, 3)), k.Masking()]
    model = lib.keras.Sequential(head + [k.LSTM(4, return_sequences=True),
                                         k.TimeDistributed(k.Dense(3, activation="softmax"))])
    model.compile(optimizer=lib.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], sample_weight_mode=mode,
                  weighted_metrics=["accuracy"] if mode else None)  # tf-keras refuses both under a strategy
    return model


def initial_weights(model) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.standard_normal(w.shape.as_list()).astype(np.float32) * 0.5 for w in model.weights]


def main() -> None:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = make_model(tf, "mask_zero")
    model.set_weights(initial_weights(model))
    ids, _, y, _ = data()
    history = model.fit(ids, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    print("RESULT " + json.dumps({"rank": strategy.extended.info.rank, "history": history.history,
                                  "weights": [w.tolist() for w in model.get_weights()]}), flush=True)


if __name__ == "__main__":
    main()
