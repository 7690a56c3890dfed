"""Single-process LSTM training step: hidden 128, 28 steps, batch 64 (MNIST rows as time
steps), plain SGD.

    python -m benchmarks.lstm_step [--threads 1] [--repeats 5] [--steps 20]

flowmesh and TensorFlow ``compat.v1`` graph mode run the same TF1 program:
``tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(128), x)`` over ``x [64, 28, 28]``, a dense
layer on the last output, ``sparse_softmax_cross_entropy_with_logits`` and
``GradientDescentOptimizer.minimize``, fetching ``[train_op, loss]`` with a ``feed_dict``
every step. flowmesh runs it on its fused LSTM op (the default: oneDNN's LSTM forward and
backward called directly); ``flowmesh_autograd`` is the fused op under torch autograd
(``FLOWMESH_ONEDNN_LSTM=0``, the earlier default); ``flowmesh_loop`` is the
same program with ``FLOWMESH_FUSED_RNN=0`` (the ``While`` loop); ``torch`` is eager
``nn.LSTM`` + ``nn.Linear`` with ``torch.optim.SGD``. All start from identical weights
(TensorFlow's kernel layout, converted for torch) and cycle through the same batches.
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

PEERS = ("tensorflow", "flowmesh_autograd", "flowmesh_loop", "torch")
LEARNING_RATE = 0.05
HIDDEN, STEPS, DEPTH, CLASSES = 128, 28, 28, 10


def make_data(batch: int, hidden: int = HIDDEN, batches: int = 4,
              seed: int = 0) -> tuple[dict[str, np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Initial weights (TensorFlow's layout) and ``batches`` (x, labels) pairs."""
    rng = np.random.RandomState(seed)
    limit = np.sqrt(6.0 / (DEPTH + hidden + 4 * hidden))
    params = {
        "kernel": rng.uniform(-limit, limit, (DEPTH + hidden, 4 * hidden)).astype(np.float32),
        "bias": np.zeros(4 * hidden, np.float32),
        "w": rng.uniform(-0.1, 0.1, (hidden, CLASSES)).astype(np.float32),
        "b": np.zeros(CLASSES, np.float32),
    }
    data = [(rng.rand(batch, STEPS, DEPTH).astype(np.float32),
             rng.randint(0, CLASSES, batch).astype(np.int64)) for _ in range(batches)]
    return params, data


def _tf1_program(tf: Any, params: dict[str, np.ndarray], hidden: int) -> tuple[Any, ...]:
    x = tf.placeholder(tf.float32, [None, STEPS, DEPTH], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    cell = tf.nn.rnn_cell.LSTMCell(hidden)
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    w = tf.Variable(params["w"], name="w")
    b = tf.Variable(params["b"], name="b")
    logits = tf.matmul(outputs[:, -1], w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
    return x, y, loss, train_op


def graph_contender(name: str, tf: Any, params: dict[str, np.ndarray], data: list[Any],
                    hidden: int = HIDDEN, fused: bool = True, onednn_lstm: bool = True) -> Contender:
    """A TF1-style graph-mode contender (flowmesh or TensorFlow); ``onednn_lstm=False``
    runs flowmesh's fused LSTM under torch autograd (``FLOWMESH_ONEDNN_LSTM=0``)."""
    sessions: list[Any] = []

    def setup(settings: Settings) -> StepFn:
        graph = tf.Graph()
        before = os.environ.get("FLOWMESH_FUSED_RNN")
        os.environ["FLOWMESH_FUSED_RNN"] = "1" if fused else "0"
        try:
            with graph.as_default():
                x, y, loss, train_op = _tf1_program(tf, params, hidden)
                init = tf.global_variables_initializer()
                cell_vars = [v for v in tf.global_variables() if "lstm_cell" in v.name]
        finally:
            if before is None:
                os.environ.pop("FLOWMESH_FUSED_RNN", None)
            else:
                os.environ["FLOWMESH_FUSED_RNN"] = before
        sess = tf.Session(graph=graph, config=tf_config_proto(tf, settings.threads))
        sessions.append(sess)
        sess.run(init)
        for v in cell_vars:
            v.load(params["kernel" if "kernel" in v.name else "bias"], sess)
        feeds = [{x: xs, y: ys} for xs, ys in data]
        fetches = [train_op, loss]
        counter = [0]

        def step() -> Any:
            counter[0] += 1
            return sess.run(fetches, feeds[counter[0] % len(feeds)])

        def autograd_step() -> Any:
            os.environ["FLOWMESH_ONEDNN_LSTM"] = "0"  # read by the kernel at every call
            try:
                return step()
            finally:
                os.environ.pop("FLOWMESH_ONEDNN_LSTM", None)

        return step if onednn_lstm else autograd_step

    return Contender(name, setup, teardown=lambda: [s.close() for s in sessions])


def torch_contender(params: dict[str, np.ndarray], data: list[Any],
                    hidden: int = HIDDEN) -> Contender:
    """PyTorch eager: ``nn.LSTM`` (TensorFlow's weights, gates reordered) + ``nn.Linear``."""

    def setup(settings: Settings) -> StepFn:
        import torch

        lstm = torch.nn.LSTM(DEPTH, hidden, batch_first=True)
        head = torch.nn.Linear(hidden, CLASSES)
        i, j, f, o = np.split(params["kernel"], 4, axis=1)
        reordered = np.concatenate([i, f, j, o], axis=1)
        bi, bj, bf, bo = np.split(params["bias"], 4)
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(torch.from_numpy(reordered[:DEPTH].T.copy()))
            lstm.weight_hh_l0.copy_(torch.from_numpy(reordered[DEPTH:].T.copy()))
            lstm.bias_ih_l0.copy_(torch.from_numpy(np.concatenate([bi, bf + 1.0, bj, bo])))
            lstm.bias_hh_l0.zero_()
            head.weight.copy_(torch.from_numpy(params["w"].T.copy()))
            head.bias.copy_(torch.from_numpy(params["b"]))
        optimizer = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()),
                                    lr=LEARNING_RATE)
        batches = [(torch.from_numpy(xs), torch.from_numpy(ys)) for xs, ys in data]
        counter = [0]

        def step() -> float:
            counter[0] += 1
            xs, ys = batches[counter[0] % len(batches)]
            outputs, _ = lstm(xs)
            loss = torch.nn.functional.cross_entropy(head(outputs[:, -1]), ys)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            return loss.item()

        return step

    return Contender("torch", setup)


def run(settings: Settings, batch: int = 64, hidden: int = HIDDEN) -> list[dict[str, Any]]:
    """Measures flowmesh against the chosen peers; returns the JSON records."""
    import flowmesh

    params, data = make_data(batch, hidden)
    contenders = [graph_contender("flowmesh", flowmesh, params, data, hidden)]
    if "tensorflow" in settings.peers:
        # TF 2.21's Keras 3 has no tf.compat.v1.nn.rnn_cell; tf-keras provides it.
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        tf1 = import_tensorflow()
        if tf1 is None:
            print("tensorflow is not installed: skipping the TensorFlow peer")
        else:
            contenders.append(graph_contender("tensorflow", tf1, params, data, hidden))
    if "flowmesh_autograd" in settings.peers:
        contenders.append(graph_contender("flowmesh_autograd", flowmesh, params, data, hidden,
                                          onednn_lstm=False))
    if "flowmesh_loop" in settings.peers:
        contenders.append(graph_contender("flowmesh_loop", flowmesh, params, data, hidden,
                                          fused=False))
    if "torch" in settings.peers:
        contenders.append(torch_contender(params, data, hidden))
    results = measure(contenders, settings)
    config = f"LSTM hidden {hidden}, {STEPS} steps x {DEPTH}, batch {batch}, SGD"
    return report("lstm_step", config, results, settings)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    settings = parse_settings(__doc__ or "", PEERS, argv, steps=20, repeats=5, warmup=5)
    return run(settings)


if __name__ == "__main__":
    main()
