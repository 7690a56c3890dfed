"""Sequence models of the model-scale set (``benchmarks/models.py`` registers them).

* ``transformer``: one Transformer encoder block (Vaswani et al. 2017), batch 16,
  sequence 64, width 128, 4 heads, feed-forward 512: ``tf.layers.dense`` projections,
  scaled dot-product attention (``tf.matmul`` + ``tf.nn.softmax``), residuals, layer
  normalization from ``tf.nn.moments`` + ``tf.nn.batch_normalization``, mean squared
  error against a target, ``AdamOptimizer``.
* ``lstm_lm``: the PTB "small" language model shape (Zaremba et al. 2014): vocabulary
  10000, embedding and one LSTM layer of 200, 20 steps, batch 20; ``embedding_lookup``,
  ``tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(200))``, a dense softmax layer over the
  vocabulary, ``sparse_softmax_cross_entropy_with_logits``, gradients clipped by global
  norm 5, ``GradientDescentOptimizer``.

Both systems initialize with their own initializers (same distributions, other values);
the data are the same seeded NumPy batches.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from benchmarks.lone import Built


def _layer_norm(tf: Any, h: Any, name: str) -> Any:
    with tf.variable_scope(name):
        width = h.shape.as_list()[-1]
        gamma = tf.get_variable("gamma", [width], initializer=tf.ones_initializer())
        beta = tf.get_variable("beta", [width], initializer=tf.zeros_initializer())
        mean, variance = tf.nn.moments(h, [-1], keep_dims=True)
        return tf.nn.batch_normalization(h, mean, variance, beta, gamma, 1e-6)


def transformer_block(tf: Any, x: Any, heads: int, d_ff: int) -> Any:
    """One post-norm encoder block over ``x [batch, time, width]``."""
    _, steps, width = x.shape.as_list()
    depth = width // heads

    def split(h: Any) -> Any:
        return tf.transpose(tf.reshape(h, [-1, steps, heads, depth]), [0, 2, 1, 3])

    q, k, v = (split(tf.layers.dense(x, width, name=n)) for n in ("q", "k", "v"))
    weights = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / math.sqrt(depth))
    attended = tf.reshape(tf.transpose(tf.matmul(weights, v), [0, 2, 1, 3]), [-1, steps, width])
    h = _layer_norm(tf, x + tf.layers.dense(attended, width, name="o"), "ln1")
    ff = tf.layers.dense(tf.layers.dense(h, d_ff, activation=tf.nn.relu, name="ff1"), width, name="ff2")
    return _layer_norm(tf, h + ff, "ln2")


def _step(tf: Any, graph: Any, threads: int, fetches: list[Any], feeds: list[dict], flops: float,
          build_s: float) -> Built:
    from benchmarks.models import _training_step

    return _training_step(tf, graph, threads, fetches, feeds, len(graph.get_operations()), flops, build_s)


def build_transformer(tf: Any, threads: int, batch: int = 16, steps: int = 64, width: int = 128,
                      heads: int = 4, d_ff: int = 512) -> Built:
    rng = np.random.RandomState(4)
    data = [(rng.randn(batch, steps, width).astype(np.float32), rng.randn(batch, steps, width).astype(np.float32))
            for _ in range(4)]
    start = time.perf_counter()
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, steps, width], name="x")
        target = tf.placeholder(tf.float32, [None, steps, width], name="target")
        loss = tf.reduce_mean(tf.square(transformer_block(tf, x, heads, d_ff) - target))
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    build_s = time.perf_counter() - start
    tokens = batch * steps
    forward = 2.0 * tokens * (4 * width * width + 2 * width * d_ff) + 4.0 * batch * steps * steps * width
    return _step(tf, graph, threads, [train_op, loss], [{x: a, target: b} for a, b in data], 3 * forward, build_s)


def build_lstm_lm(tf: Any, threads: int, batch: int = 20, steps: int = 20, vocab: int = 10000,
                  hidden: int = 200) -> Built:
    rng = np.random.RandomState(5)
    data = [rng.randint(0, vocab, (batch, steps + 1)).astype(np.int64) for _ in range(4)]
    start = time.perf_counter()
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        words = tf.placeholder(tf.int64, [batch, steps + 1], name="words")
        embedding = tf.get_variable("embedding", [vocab, hidden],
                                    initializer=tf.random_uniform_initializer(-0.1, 0.1))
        inputs = tf.nn.embedding_lookup(embedding, words[:, :-1])
        outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(hidden), inputs, dtype=tf.float32)
        logits = tf.layers.dense(tf.reshape(outputs, [-1, hidden]), vocab, name="softmax")
        labels = tf.reshape(words[:, 1:], [-1])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        params = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(loss, params), 5.0)
        train_op = tf.train.GradientDescentOptimizer(1.0).apply_gradients(list(zip(grads, params)))
    build_s = time.perf_counter() - start
    tokens = batch * steps
    forward = 2.0 * tokens * (hidden * vocab + 2 * hidden * 4 * hidden)
    return _step(tf, graph, threads, [train_op, loss], [{words: w} for w in data], 3 * forward, build_s)
