"""Keras ``fit`` throughput: MLP 784-256-256-10, batch 128, SGD, samples/s.

    python -m benchmarks.keras_fit [--threads 1] [--repeats 5] [--steps 3] [--batches 16]

One timed step is one ``model.fit(x, y, batch_size=128, epochs=1, shuffle=False,
verbose=0)`` over ``--batches`` batches (what a user calls), reported as samples/s.
Contenders, all from the same NumPy weights and data, with ``metrics=["accuracy"]``:

* ``flowmesh``: ``flowmesh.keras`` (graph mode, one ``Session.run`` per batch); with
  ``--threads N`` (default 1) its Keras session gets ``intra_op_parallelism_threads=N``, as
  the tf-keras peer's does (without it the session's thread tuner may run steps on the
  whole OpenMP team);
* ``tf-keras-graph``: TensorFlow's Keras 2 (the ``tf-keras`` package) with eager execution
  disabled, in this process (its session gets the harness's thread settings);
* ``keras3``: TensorFlow 2.21's default Keras (Keras 3, eager + ``tf.function``). Keras 3
  needs eager execution, which the graph-mode peer disables for the whole process, so it
  runs in a child process: each step sends one line on a pipe and waits for the child's
  reply after its ``fit`` returned (a pipe round trip, ~0.1 ms, is inside its time).
"""

from __future__ import annotations

import os
import subprocess
import sys
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

PEERS = ("tf-keras-graph", "keras3")
LEARNING_RATE = 0.01


def make_data(layers: Sequence[int], batch: int, batches: int, seed: int = 0) -> tuple[list, np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    weights = []
    for fan_in, fan_out in zip(layers[:-1], layers[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights += [rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32), np.zeros(fan_out, np.float32)]
    x = rng.rand(batch * batches, layers[0]).astype(np.float32)
    y = rng.randint(0, layers[-1], batch * batches).astype(np.int64)
    return weights, x, y


def build(K: Any, layers: Sequence[int], weights: list[np.ndarray], optimizer: Any) -> Any:
    """The Keras MLP (``K`` is flowmesh.keras, tf_keras or keras 3) with the given weights."""
    model = K.Sequential([K.layers.Dense(layers[1], activation="relu", input_shape=(layers[0],))] +
                         [K.layers.Dense(n, activation="relu") for n in layers[2:-1]] +
                         [K.layers.Dense(layers[-1], activation="softmax")])
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.set_weights(weights)
    return model


def flowmesh_contender(layers: Sequence[int], weights: list, x: np.ndarray, y: np.ndarray, batch: int) -> Contender:
    import flowmesh

    def setup(settings: Settings) -> StepFn:
        graph = flowmesh.Graph()
        with graph.as_default():
            if settings.threads:  # as the tf-keras peer's session: a fixed intra-op thread count
                config = flowmesh.ConfigProto(intra_op_parallelism_threads=settings.threads)
                flowmesh.keras.backend.set_session(flowmesh.Session(graph=graph, config=config))
            model = build(flowmesh.keras, layers, weights, flowmesh.keras.optimizers.SGD(LEARNING_RATE))

        def step() -> Any:
            with graph.as_default():
                return model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)

        return step

    return Contender("flowmesh", setup)


def tf_keras_contender(layers: Sequence[int], weights: list, x: np.ndarray, y: np.ndarray,
                       batch: int) -> Contender | None:
    tf1 = import_tensorflow()
    if tf1 is None:
        return None
    try:
        import tf_keras
        from tf_keras.src import backend as tf_keras_backend
    except ImportError:
        return None

    def setup(settings: Settings) -> StepFn:
        graph = tf1.Graph()
        with graph.as_default():
            tf_keras_backend.set_session(tf1.Session(graph=graph, config=tf_config_proto(tf1, settings.threads)))
            model = build(tf_keras, layers, weights, tf_keras.optimizers.legacy.SGD(LEARNING_RATE))

        def step() -> Any:
            with graph.as_default():
                return model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)

        return step

    return Contender("tf-keras-graph", setup)


class _Keras3Child:
    """A child process running Keras 3 fits on request (one line in, one line out)."""

    def __init__(self, threads: int, layers: Sequence[int], batch: int, batches: int):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_USE_LEGACY_KERAS="0")
        args = [sys.executable, "-m", "benchmarks.keras_fit", "--child", str(threads), ",".join(map(str, layers)),
                str(batch), str(batches)]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
                                     cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self._expect("ready")

    def _expect(self, word: str) -> None:
        line = self.proc.stdout.readline().strip()
        if line != word:
            raise RuntimeError(f"keras3 child said {line!r} instead of {word!r}")

    def fit(self) -> None:
        self.proc.stdin.write("fit\n")
        self.proc.stdin.flush()
        self._expect("done")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def keras3_contender(layers: Sequence[int], batch: int, batches: int) -> Contender:
    children: list[_Keras3Child] = []

    def setup(settings: Settings) -> StepFn:
        child = _Keras3Child(settings.threads, layers, batch, batches)
        children.append(child)
        return child.fit

    return Contender("keras3", setup, teardown=lambda: [c.close() for c in children])


def _child(threads: int, layers: Sequence[int], batch: int, batches: int) -> None:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    import keras

    weights, x, y = make_data(layers, batch, batches)
    model = build(keras, layers, weights, keras.optimizers.SGD(LEARNING_RATE))
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "fit":
            model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
            print("done", flush=True)


def run(settings: Settings, layers: Sequence[int] = (784, 256, 256, 10), batch: int = 128,
        batches: int = 16) -> list[dict[str, Any]]:
    """Measures flowmesh's Keras fit against the chosen peers; returns the JSON records."""
    weights, x, y = make_data(layers, batch, batches)
    contenders = [flowmesh_contender(layers, weights, x, y, batch)]
    if "tf-keras-graph" in settings.peers:
        peer = tf_keras_contender(layers, weights, x, y, batch)
        if peer is None:
            print("tensorflow/tf-keras are not installed: skipping the tf-keras-graph peer")
        else:
            contenders.append(peer)
    if "keras3" in settings.peers:
        contenders.append(keras3_contender(layers, batch, batches))
    results = measure(contenders, settings)
    samples = batch * batches
    for result in results:
        result.rates = [r * samples for r in result.rates]
    config = f"Keras fit MLP {'-'.join(map(str, layers))} batch {batch}, {batches} batches per fit, SGD"
    return report("keras_fit", config, results, settings, unit="samples/s")


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    batches = 16
    if "--batches" in argv:
        i = argv.index("--batches")
        batches = int(argv[i + 1])
        del argv[i:i + 2]
    settings = parse_settings(__doc__ or "", PEERS, argv, steps=3, repeats=5, warmup=1)
    return run(settings, batches=batches)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]), [int(v) for v in sys.argv[3].split(",")], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
