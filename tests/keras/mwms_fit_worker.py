"""One worker of the Keras MultiWorkerMirroredStrategy fit test (started with its TF_CONFIG)."""

from __future__ import annotations

import json

import numpy as np

import flowmesh as tf


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 6)).astype(np.float32)
    y = x[:, :3].argmax(1).astype(np.int64)
    return x, y


def make_model(K):
    model = K.Sequential([K.layers.Dense(8, activation="relu", input_shape=(6,)),
                          K.layers.Dense(3, activation="softmax")])
    model.compile(K.optimizers.SGD(0.1, momentum=0.5), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def initial_weights(model):
    rng = np.random.default_rng(1)
    return [rng.standard_normal(w.shape.as_list()).astype(np.float32) * 0.5 for w in model.weights]


def main() -> None:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = make_model(tf.keras)
    model.set_weights(initial_weights(model))
    x, y = data()
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    print("RESULT " + json.dumps({"rank": strategy.extended.info.rank, "history": history.history,
                                  "weights": [w.tolist() for w in model.get_weights()]}), flush=True)


if __name__ == "__main__":
    main()
