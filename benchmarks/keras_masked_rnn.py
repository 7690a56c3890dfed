"""Keras training step on padded sequences: ``Embedding(mask_zero=True)`` -> ``LSTM(128)``
-> ``Dense(10)``, 28 steps, batch 64, SGD (one ``train_on_batch`` per timed step).

    python -m benchmarks.keras_masked_rnn [--threads 1] [--repeats 5] [--steps 10]

The sequences are right-padded with id 0 to 28 steps (lengths 8..28), so the LSTM skips
masked steps (tf-keras's masked ``backend.rnn``; flowmesh's masked ``While`` loop, never the
fused kernel). Contenders from the same weights and batches: ``flowmesh`` (``flowmesh.keras``,
graph mode) and ``tf-keras-graph`` (TensorFlow's Keras 2 with eager execution disabled, its
session given the harness's thread settings). ``flowmesh_unmasked`` is flowmesh on the same
model with ``mask_zero=False`` (what the mask costs).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.harness import (
    Contender,
    Settings,
    StepFn,
    import_tensorflow,
    measure,
    parse_settings,
    report,
    tf_config_proto,
)

PEERS = ("tf-keras-graph", "flowmesh_unmasked")
VOCAB, EMBED, HIDDEN, STEPS, CLASSES = 1000, 32, 128, 28, 10


def make_data(batch: int, batches: int = 4, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``batches`` (ids, labels) pairs, ids right-padded with 0."""
    rng = np.random.RandomState(seed)
    data = []
    for _ in range(batches):
        ids = rng.randint(1, VOCAB, (batch, STEPS)).astype(np.int32)
        lengths = rng.randint(8, STEPS + 1, batch)
        ids[np.arange(STEPS)[None, :] >= lengths[:, None]] = 0
        data.append((ids, rng.randint(0, CLASSES, (batch, 1)).astype(np.float32)))
    return data


def build(K: Any, optimizer: Any, mask_zero: bool = True) -> Any:
    model = K.Sequential([K.layers.Embedding(VOCAB, EMBED, mask_zero=mask_zero, input_length=STEPS),
                          K.layers.LSTM(HIDDEN, recurrent_activation="sigmoid"),
                          K.layers.Dense(CLASSES, activation="softmax")])
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    return model


def _stepper(model: Any, graph: Any, data: list[Any]) -> StepFn:
    counter = [0]

    def step() -> Any:
        counter[0] += 1
        ids, labels = data[counter[0] % len(data)]
        with graph.as_default():
            return model.train_on_batch(ids, labels)

    return step


def flowmesh_contender(name: str, weights: list[np.ndarray], data: list[Any], mask_zero: bool) -> Contender:
    import flowmesh

    def setup(settings: Settings) -> StepFn:
        graph = flowmesh.Graph()
        with graph.as_default():
            model = build(flowmesh.keras, flowmesh.keras.optimizers.SGD(0.05), mask_zero)
            model.set_weights(weights)
        return _stepper(model, graph, data)

    return Contender(name, setup)


def tf_keras_setup(tf1: Any) -> tuple[Any, Any]:
    import tf_keras
    from tf_keras.src import backend as tf_keras_backend

    tf1.experimental.output_all_intermediates(True)  # tf-keras trains after running the loop
    return tf_keras, tf_keras_backend


def tf_keras_contender(tf1: Any, weights: list[np.ndarray], data: list[Any]) -> Contender:
    tf_keras, tf_keras_backend = tf_keras_setup(tf1)

    def setup(settings: Settings) -> StepFn:
        graph = tf1.Graph()
        with graph.as_default():
            tf_keras_backend.set_session(tf1.Session(graph=graph, config=tf_config_proto(tf1, settings.threads)))
            model = build(tf1.keras, tf_keras.optimizers.legacy.SGD(0.05))  # v1 layers, as flowmesh
            model.set_weights(weights)
        return _stepper(model, graph, data)

    return Contender("tf-keras-graph", setup)


def initial_weights() -> list[np.ndarray]:
    import flowmesh

    with flowmesh.Graph().as_default():
        return build(flowmesh.keras, "sgd").get_weights()


def run(settings: Settings, batch: int = 64) -> list[dict[str, Any]]:
    """Measures flowmesh against the chosen peers; returns the JSON records."""
    data = make_data(batch)
    weights = initial_weights()
    contenders = [flowmesh_contender("flowmesh", weights, data, True)]
    if "tf-keras-graph" in settings.peers:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        tf1 = import_tensorflow()
        if tf1 is None:
            print("tensorflow is not installed: skipping the tf-keras peer")
        else:
            contenders.append(tf_keras_contender(tf1, weights, data))
    if "flowmesh_unmasked" in settings.peers:
        contenders.append(flowmesh_contender("flowmesh_unmasked", weights, data, False))
    results = measure(contenders, settings)
    config = f"Embedding(mask_zero) + LSTM {HIDDEN} (sigmoid), {STEPS} padded steps, batch {batch}, SGD"
    return report("keras_masked_rnn", config, results, settings)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    settings = parse_settings(__doc__ or "", PEERS, argv, steps=10, repeats=5, warmup=3)
    return run(settings)


if __name__ == "__main__":
    main()
