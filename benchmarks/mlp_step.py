"""Single-process training-step throughput: MLP 784-256-256-10, batch 128, plain SGD.

    python -m benchmarks.mlp_step [--threads 1] [--repeats 5] [--steps 50] [--contend N]

``--threads 0`` gives every system its own default threads (what a user who sets nothing
gets); ``--contend N`` measures while N CPU-bound processes compete (benchmarks/contention.py).

flowmesh and TensorFlow ``compat.v1`` graph mode run the same TF1 program (placeholders,
``get_variable``-style weights, ReLU, ``sparse_softmax_cross_entropy_with_logits``,
``GradientDescentOptimizer.minimize``), fetching ``[train_op, loss]`` with a ``feed_dict``
every step; PyTorch eager runs the same model with ``torch.optim.SGD``. All three start
from identical NumPy weights and cycle through the same pre-generated batches.
"""

from __future__ import annotations

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

PEERS = ("tensorflow", "torch")
LEARNING_RATE = 0.01


def make_data(layers: Sequence[int], batch: int, batches: int = 8,
              seed: int = 0) -> tuple[list[np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Initial weights (w, b per layer) and ``batches`` (x, labels) pairs."""
    rng = np.random.RandomState(seed)
    params = []
    for fan_in, fan_out in zip(layers[:-1], layers[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    data = [(rng.rand(batch, layers[0]).astype(np.float32),
             rng.randint(0, layers[-1], batch).astype(np.int64)) for _ in range(batches)]
    return params, data


def _tf1_program(tf: Any, params: list[np.ndarray], layers: Sequence[int]) -> tuple[Any, ...]:
    """Builds the TF1 training graph with ``tf`` (flowmesh or tensorflow.compat.v1)."""
    x = tf.placeholder(tf.float32, [None, layers[0]], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = x
    for i in range(len(layers) - 1):
        w = tf.Variable(params[2 * i], name=f"w{i}")
        b = tf.Variable(params[2 * i + 1], name=f"b{i}")
        h = tf.matmul(h, w) + b
        if i < len(layers) - 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
    return x, y, loss, train_op


def graph_contender(name: str, tf: Any, params: list[np.ndarray], data: list[Any],
                    layers: Sequence[int]) -> Contender:
    """A TF1-style graph-mode contender (flowmesh or TensorFlow)."""
    sessions: list[Any] = []

    def setup(settings: Settings) -> StepFn:
        graph = tf.Graph()
        with graph.as_default():
            x, y, loss, train_op = _tf1_program(tf, params, layers)
            init = tf.global_variables_initializer()
        sess = tf.Session(graph=graph, config=tf_config_proto(tf, settings.threads))
        sessions.append(sess)
        sess.run(init)
        feeds = [{x: xs, y: ys} for xs, ys in data]
        fetches = [train_op, loss]
        counter = [0]

        def step() -> Any:
            counter[0] += 1
            return sess.run(fetches, feeds[counter[0] % len(feeds)])

        return step

    return Contender(name, setup, teardown=lambda: [s.close() for s in sessions])


def torch_contender(params: list[np.ndarray], data: list[Any], layers: Sequence[int]) -> Contender:
    """PyTorch eager: the same model with ``torch.optim.SGD``."""

    def setup(settings: Settings) -> StepFn:
        import torch

        weights = [torch.tensor(p, requires_grad=True) for p in params]
        optimizer = torch.optim.SGD(weights, lr=LEARNING_RATE)
        batches = [(torch.from_numpy(xs), torch.from_numpy(ys)) for xs, ys in data]
        counter = [0]

        def step() -> float:
            counter[0] += 1
            xs, ys = batches[counter[0] % len(batches)]
            h = xs
            for i in range(len(layers) - 1):
                h = torch.addmm(weights[2 * i + 1], h, weights[2 * i])
                if i < len(layers) - 2:
                    h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(h, ys)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            return loss.item()

        return step

    return Contender("torch", setup)


def run(settings: Settings, layers: Sequence[int] = (784, 256, 256, 10),
        batch: int = 128) -> list[dict[str, Any]]:
    """Measures flowmesh against the chosen peers; returns the JSON records."""
    import flowmesh

    params, data = make_data(layers, batch)
    contenders = [graph_contender("flowmesh", flowmesh, params, data, layers)]
    if "tensorflow" in settings.peers:
        tf1 = import_tensorflow()
        if tf1 is None:
            print("tensorflow is not installed: skipping the TensorFlow peer")
        else:
            contenders.append(graph_contender("tensorflow", tf1, params, data, layers))
    if "torch" in settings.peers:
        contenders.append(torch_contender(params, data, layers))
    results = measure(contenders, settings)
    config = f"MLP {'-'.join(map(str, layers))} batch {batch} SGD"
    return report("mlp_step", config, results, settings)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    settings = parse_settings(__doc__ or "", PEERS, argv, steps=50, repeats=5, warmup=10)
    return run(settings)


if __name__ == "__main__":
    main()
