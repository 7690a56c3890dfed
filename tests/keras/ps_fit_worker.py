"""The program every task of the Keras ParameterServerStrategy test runs (under
``flowmesh launch --ps 2 --workers 2``): ps tasks serve inside the strategy's
constructor; each worker fits on its rows of a separable 3-class problem."""

from __future__ import annotations

import json

import numpy as np

import flowmesh as tf


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((600, 8)).astype(np.float32)
    y = x[:, :3].argmax(1).astype(np.int64)
    return x, y


def main() -> None:
    strategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy()
    extended = strategy.extended
    K = tf.keras
    with strategy.scope():
        model = K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(8,)),
                              K.layers.Dense(3, activation="softmax")])
        model.compile(K.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = data()
    history = model.fit(x, y, batch_size=32, epochs=6, verbose=0)
    loss, accuracy = model.evaluate(x, y, verbose=0)
    placement = sorted({w.device for w in model.weights + [model.optimizer.iterations]})
    steps = int(K.backend.get_value(model.optimizer.iterations))
    print("RESULT " + json.dumps({"task": f"{extended.task_type}:{extended.task_id}", "chief": extended.is_chief,
                                  "loss": history.history["loss"], "eval_loss": loss, "accuracy": accuracy,
                                  "placement": placement, "iterations": steps}), flush=True)


if __name__ == "__main__":
    main()
