"""Single-process training-step throughput: a LeNet-style CNN on 28x28x1, batch 64, SGD.

    python -m benchmarks.cnn_step [--threads 1] [--repeats 5] [--steps 20] [--contend N]

``--threads 0`` gives every system its own default threads (what a user who sets nothing
gets); ``--contend N`` measures while N CPU-bound processes compete (benchmarks/contention.py).

The network (Caffe's LeNet with a SAME first layer): conv 5x5x20 SAME + bias + ReLU ->
max-pool 2x2 -> conv 5x5x50 VALID + bias + ReLU -> max-pool 2x2 -> dense 1250x500 + ReLU
-> dense 500x10, softmax cross entropy, plain SGD. flowmesh and TensorFlow ``compat.v1``
graph mode run the same TF1 program (NHWC placeholders, ``tf.nn.conv2d``/``max_pool``/
``bias_add``, ``sparse_softmax_cross_entropy_with_logits``, ``minimize``), fetching
``[train_op, loss]`` with a ``feed_dict`` every step; PyTorch eager runs the same model in
its native NCHW layout with ``torch.optim.SGD``. All start from identical NumPy weights and
cycle through the same pre-generated batches.
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
# name -> shape (HWIO for conv filters)
SHAPES = {
    "conv1/w": (5, 5, 1, 20), "conv1/b": (20,),
    "conv2/w": (5, 5, 20, 50), "conv2/b": (50,),
    "fc1/w": (5 * 5 * 50, 500), "fc1/b": (500,),
    "fc2/w": (500, 10), "fc2/b": (10,),
}


def make_data(batch: int, batches: int = 4, seed: int = 0) -> tuple[dict[str, np.ndarray], list[Any]]:
    """Glorot-uniform weights, zero biases, and ``batches`` (images, labels) pairs."""
    rng = np.random.RandomState(seed)
    params = {}
    for name, shape in SHAPES.items():
        if len(shape) == 1:
            params[name] = np.zeros(shape, np.float32)
            continue
        receptive = int(np.prod(shape[:-2])) if len(shape) == 4 else 1
        fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params[name] = rng.uniform(-limit, limit, shape).astype(np.float32)
    data = [(rng.rand(batch, 28, 28, 1).astype(np.float32), rng.randint(0, 10, batch).astype(np.int64))
            for _ in range(batches)]
    return params, data


def build_lenet(tf: Any, params: dict[str, np.ndarray]) -> tuple[Any, ...]:
    """The TF1 training graph, built with ``tf`` (flowmesh or tensorflow.compat.v1)."""
    x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    v = {name: tf.Variable(value, name=name.replace("/", "_")) for name, value in params.items()}
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, v["conv1/w"], [1, 1, 1, 1], "SAME"), v["conv1/b"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, v["conv2/w"], [1, 1, 1, 1], "VALID"), v["conv2/b"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.reshape(h, [-1, 5 * 5 * 50])
    h = tf.nn.relu(tf.matmul(h, v["fc1/w"]) + v["fc1/b"])
    logits = tf.matmul(h, v["fc2/w"]) + v["fc2/b"]
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
    return x, y, loss, train_op


def graph_contender(name: str, tf: Any, params: dict[str, np.ndarray], data: list[Any]) -> Contender:
    """A TF1-style graph-mode contender (flowmesh or TensorFlow)."""
    sessions: list[Any] = []

    def setup(settings: Settings) -> StepFn:
        graph = tf.Graph()
        with graph.as_default():
            x, y, loss, train_op = build_lenet(tf, params)
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


def torch_contender(params: dict[str, np.ndarray], data: list[Any]) -> Contender:
    """PyTorch eager: the same model in NCHW with ``torch.optim.SGD``."""

    def setup(settings: Settings) -> StepFn:
        import torch
        import torch.nn.functional as nnf

        def weight(name: str) -> Any:
            value = params[name]
            if value.ndim == 4:
                value = value.transpose(3, 2, 0, 1)  # HWIO -> OIHW
            return torch.tensor(np.ascontiguousarray(value), requires_grad=True)

        w = {name: weight(name) for name in params}
        optimizer = torch.optim.SGD(list(w.values()), lr=LEARNING_RATE)
        batches = [(torch.from_numpy(xs.transpose(0, 3, 1, 2).copy()), torch.from_numpy(ys)) for xs, ys in data]
        counter = [0]

        def step() -> float:
            counter[0] += 1
            xs, ys = batches[counter[0] % len(batches)]
            h = nnf.max_pool2d(torch.relu(nnf.conv2d(xs, w["conv1/w"], w["conv1/b"], padding=2)), 2)
            h = nnf.max_pool2d(torch.relu(nnf.conv2d(h, w["conv2/w"], w["conv2/b"])), 2)
            h = torch.relu(torch.addmm(w["fc1/b"], h.permute(0, 2, 3, 1).reshape(-1, 1250), w["fc1/w"]))
            loss = nnf.cross_entropy(torch.addmm(w["fc2/b"], h, w["fc2/w"]), ys)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            return loss.item()

        return step

    return Contender("torch", setup)


def run(settings: Settings, batch: int = 64) -> list[dict[str, Any]]:
    """Measures flowmesh against the chosen peers; returns the JSON records."""
    import flowmesh

    params, data = make_data(batch)
    contenders = [graph_contender("flowmesh", flowmesh, params, data)]
    if "tensorflow" in settings.peers:
        tf1 = import_tensorflow()
        if tf1 is None:
            print("tensorflow is not installed: skipping the TensorFlow peer")
        else:
            contenders.append(graph_contender("tensorflow", tf1, params, data))
    if "torch" in settings.peers:
        contenders.append(torch_contender(params, data))
    results = measure(contenders, settings)
    config = f"LeNet-style CNN 28x28x1 conv5x5x20-pool-conv5x5x50-pool-fc500-fc10 batch {batch} SGD"
    return report("cnn_step", config, results, settings)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    settings = parse_settings(__doc__ or "", PEERS, argv, steps=20, repeats=5, warmup=5)
    return run(settings)


if __name__ == "__main__":
    main()
