"""The model-scale set: TF1 programs built the same way in flowmesh and in TensorFlow.

Each model is ``build(tf, threads) -> Built`` for ``tf`` = ``flowmesh`` or
``tensorflow.compat.v1``: the graph, a session (``threads`` 0: the system's defaults),
initialization, and a training ``step`` that runs ``sess.run([train_op, loss], feed)``
over a few pre-generated batches (NumPy, seeded: both systems see the same data).

* ``resnet20``: ResNet-20 on CIFAR-shaped images (32x32x3), batch 32: ``tf.layers.conv2d``
  (3x3, no bias) + ``tf.layers.batch_normalization(training=True)`` (fused, the default) +
  ReLU, three stages of 16/32/64 filters, projection shortcuts (1x1 conv + batch norm)
  where the shape changes, global average pooling, dense 10, softmax cross entropy,
  ``MomentumOptimizer(0.1, 0.9)`` with the ``UPDATE_OPS`` dependency.
* ``many_vars``: 2000 variables of 8 floats, ``loss = add_n(reduce_sum(square(v_i * x)))``,
  one ``GradientDescentOptimizer.minimize``; ``many_vars_momentum`` / ``many_vars_adam``
  the same with those optimizers.
* ``graph_build``: the ``many_vars`` program with 250 variables, timed from the first graph
  op to the end of the first step (initialization included); the rate is builds/s.
* ``transformer``, ``lstm_lm``: ``benchmarks/models_seq.py``.
* ``mlp``, ``cnn``: ``benchmarks/mlp_step.py``'s and ``benchmarks/cnn_step.py``'s
  programs, for the small-model figures measured as lone processes.
* ``keras_fit``: ``model.fit`` of the MLP over 16 batches per call (``benchmarks/keras_fit.py``'s
  program as a lone process); the rate is fits/s (x 2048 for samples/s).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import cnn_step, mlp_step, models_seq
from benchmarks.lone import Built, session


def _training_step(tf: Any, graph: Any, threads: int, fetches: list[Any], feeds: list[dict],
                   ops: int, flops: float = 0.0, build_s: float = 0.0) -> Built:
    start = time.perf_counter()
    sess = session(tf, graph, threads)
    with graph.as_default():
        init = tf.global_variables_initializer()
    sess.run(init)
    counter = [0]

    def step() -> Any:
        counter[0] += 1
        return sess.run(fetches, feeds[counter[0] % len(feeds)])

    step()
    first_run_s = time.perf_counter() - start
    return Built(step, ops=ops, flops=flops, extra={"build_s": build_s, "first_run_s": first_run_s})


# --- ResNet-20 ---------------------------------------------------------------------------------
class _ConvFlops:
    """Counts a training step's convolution FLOPs: forward, filter and input gradients."""

    def __init__(self, batch: int):
        self.batch, self.total = batch, 0.0

    def add(self, out_hw: int, cin: int, cout: int, k: int, input_grad: bool = True) -> None:
        forward = 2.0 * self.batch * out_hw * out_hw * cout * cin * k * k
        self.total += forward * (3 if input_grad else 2)


def _conv_bn(tf: Any, h: Any, filters: int, k: int, stride: int, name: str, count: _ConvFlops,
             input_grad: bool = True) -> Any:
    cin, size = h.shape.as_list()[-1], h.shape.as_list()[1]
    h = tf.layers.conv2d(h, filters, k, stride, "same", use_bias=False, name=f"{name}/conv")
    count.add(-(-size // stride), cin, filters, k, input_grad)
    return tf.layers.batch_normalization(h, training=True, name=f"{name}/bn")


def resnet_cifar(tf: Any, x: Any, blocks: int, count: _ConvFlops) -> Any:
    """ResNet-(6 * blocks + 2) for CIFAR (He et al. 2016, section 4.2), projection shortcuts."""
    h = tf.nn.relu(_conv_bn(tf, x, 16, 3, 1, "stem", count, input_grad=False))
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"stage{stage}/block{block}"
            shortcut = h
            h = tf.nn.relu(_conv_bn(tf, h, filters, 3, stride, f"{name}/a", count))
            h = _conv_bn(tf, h, filters, 3, 1, f"{name}/b", count)
            if stride != 1 or shortcut.shape.as_list()[-1] != filters:
                shortcut = _conv_bn(tf, shortcut, filters, 1, stride, f"{name}/proj", count)
            h = tf.nn.relu(h + shortcut)
    return tf.layers.dense(tf.reduce_mean(h, [1, 2]), 10, name="logits")


def build_resnet20(tf: Any, threads: int, batch: int = 32, batches: int = 4) -> Built:
    rng = np.random.RandomState(0)
    data = [(rng.rand(batch, 32, 32, 3).astype(np.float32), rng.randint(0, 10, batch).astype(np.int64))
            for _ in range(batches)]
    start = time.perf_counter()
    graph = tf.Graph()
    count = _ConvFlops(batch)
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 32, 32, 3], name="images")
        y = tf.placeholder(tf.int64, [None], name="labels")
        logits = resnet_cifar(tf, x, 3, count)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    build_s = time.perf_counter() - start
    feeds = [{x: xs, y: ys} for xs, ys in data]
    return _training_step(tf, graph, threads, [train_op, loss], feeds, len(graph.get_operations()),
                          count.total, build_s)


# --- many small variables ----------------------------------------------------------------------
def _many_vars_graph(tf: Any, variables: int, width: int, optimizer: str) -> tuple[Any, ...]:
    rng = np.random.RandomState(1)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [width], name="x")
        params = [tf.Variable(rng.randn(width).astype(np.float32) * 0.1, name=f"v{i}") for i in range(variables)]
        loss = tf.add_n([tf.reduce_sum(tf.square(v * x)) for v in params])
        opt = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.01),
               "momentum": lambda: tf.train.MomentumOptimizer(0.01, 0.9),
               "adam": lambda: tf.train.AdamOptimizer(0.001)}[optimizer]()
        train_op = opt.minimize(loss)
    return graph, x, loss, train_op


def build_many_vars(tf: Any, threads: int, variables: int = 2000, width: int = 8,
                    optimizer: str = "sgd") -> Built:
    start = time.perf_counter()
    graph, x, loss, train_op = _many_vars_graph(tf, variables, width, optimizer)
    build_s = time.perf_counter() - start
    rng = np.random.RandomState(2)
    feeds = [{x: rng.rand(width).astype(np.float32)} for _ in range(4)]
    return _training_step(tf, graph, threads, [train_op, loss], feeds, len(graph.get_operations()),
                          build_s=build_s)


def build_graph_build(tf: Any, threads: int) -> Built:
    """One build + first run per process; ``step`` re-reports it (the rate is builds/s)."""
    built = build_many_vars(tf, threads, variables=250)
    seconds = built.extra["build_s"] + built.extra["first_run_s"]
    return Built(lambda: time.sleep(0), ops=built.ops, extra={**built.extra, "builds_per_s": 1.0 / seconds})


# --- the small models of mlp_step / cnn_step ----------------------------------------------------
def build_mlp(tf: Any, threads: int) -> Built:
    layers = (784, 256, 256, 10)
    params, data = mlp_step.make_data(layers, 128)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train_op = mlp_step._tf1_program(tf, params, layers)
    feeds = [{x: xs, y: ys} for xs, ys in data]
    return _training_step(tf, graph, threads, [train_op, loss], feeds, len(graph.get_operations()))


def build_cnn(tf: Any, threads: int) -> Built:
    params, data = cnn_step.make_data(64)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, train_op = cnn_step.build_lenet(tf, params)
    feeds = [{x: xs, y: ys} for xs, ys in data]
    return _training_step(tf, graph, threads, [train_op, loss], feeds, len(graph.get_operations()))


# --- Keras fit --------------------------------------------------------------------------------
KERAS_BATCHES = 16


def build_keras_fit(tf: Any, threads: int) -> Built:
    """``model.fit`` of the MLP 784-256-256-10 (SGD, ``metrics=["accuracy"]``) over
    ``KERAS_BATCHES`` batches of 128, one call per step, as ``benchmarks/keras_fit.py`` does;
    ``tf.keras`` is flowmesh's Keras or, for TensorFlow, tf-keras in graph mode. ``threads``
    > 0 gives the Keras session that many intra/inter-op threads."""
    keras = tf.keras
    if threads:
        keras.backend.set_session(session(tf, tf.get_default_graph(), threads))
    rng = np.random.default_rng(0)
    x = rng.random((128 * KERAS_BATCHES, 784), dtype=np.float32)
    y = rng.integers(0, 10, size=(128 * KERAS_BATCHES,)).astype(np.int64)
    start = time.perf_counter()
    model = keras.Sequential([keras.layers.Dense(256, activation="relu", input_shape=(784,)),
                              keras.layers.Dense(256, activation="relu"),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    build_s = time.perf_counter() - start

    def step() -> Any:
        return model.fit(x, y, batch_size=128, epochs=1, shuffle=False, verbose=0)

    step()
    return Built(step, extra={"build_s": build_s, "first_run_s": time.perf_counter() - start,
                              "samples_per_step": 128 * KERAS_BATCHES})


MODELS: dict[str, tuple[Callable[[Any, int], Built], str, str]] = {
    # name: (build, description, unit)
    "resnet20": (build_resnet20, "ResNet-20 CIFAR 32x32x3 batch 32, tf.layers conv + fused batch norm, "
                                 "momentum", "steps/s"),
    "many_vars": (build_many_vars, "2000 variables of 8 floats, one GradientDescent minimize", "steps/s"),
    "many_vars_momentum": (lambda tf, t: build_many_vars(tf, t, optimizer="momentum"),
                           "2000 variables of 8 floats, one Momentum minimize", "steps/s"),
    "many_vars_adam": (lambda tf, t: build_many_vars(tf, t, optimizer="adam"),
                       "2000 variables of 8 floats, one Adam minimize", "steps/s"),
    "graph_build": (build_graph_build, "graph build + first run, 250 variables, GradientDescent",
                    "builds/s"),
    "transformer": (lambda tf, t: models_seq.build_transformer(tf, t),
                    "Transformer encoder block batch 16 x 64 tokens, width 128, 4 heads, ff 512, Adam",
                    "steps/s"),
    "lstm_lm": (lambda tf, t: models_seq.build_lstm_lm(tf, t),
                "LSTM LM (PTB small: vocab 10000, 200 units, 20 steps, batch 20), clipped SGD", "steps/s"),
    "mlp": (build_mlp, "MLP 784-256-256-10 batch 128 SGD (mlp_step's program)", "steps/s"),
    "cnn": (build_cnn, "LeNet-style CNN batch 64 SGD (cnn_step's program)", "steps/s"),
    "keras_fit": (build_keras_fit, f"Keras fit, MLP 784-256-256-10, {KERAS_BATCHES} batches of 128 "
                                   "per call, SGD, accuracy metric", "fits/s"),
}
