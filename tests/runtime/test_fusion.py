"""Update fusion: runs of optimizer updates become one multi-tensor kernel, same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
    "locked": lambda: tf.train.GradientDescentOptimizer(0.1, use_locking=True),
}


def _train(make_opt, steps: int = 4) -> tuple[list[np.ndarray], list[str]]:
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(7)
        x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        h = x
        for i in range(3):
            w = tf.Variable(tf.random_normal([3, 3]), name=f"w{i}")
            b = tf.Variable(tf.zeros([3]), name=f"b{i}")
            h = tf.tanh(tf.matmul(h, w) + b)
        loss = tf.reduce_sum(tf.square(h - 0.5))
        train = make_opt().minimize(loss, global_step=tf.train.get_or_create_global_step())
        trainable = tf.trainable_variables()
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train)
        program = sess._backend.plan_for([], [], [train]).programs[0]
        return sess.run(trainable), [n.name for n in program.nodes]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fused_updates_match_one_kernel_per_variable(name: str, monkeypatch) -> None:
    import flowmesh.runtime.executor as executor

    fused, node_names = _train(OPTIMIZERS[name])
    monkeypatch.setattr(executor, "fuse_updates", list)
    separate, separate_names = _train(OPTIMIZERS[name])
    for a, b in zip(fused, separate):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    fused_nodes = [n for n in node_names if "fused" in n]
    if name == "locked":
        assert not fused_nodes  # use_locking keeps one locked kernel per variable
    else:
        assert len(fused_nodes) == 1 and "+5 fused" in fused_nodes[0]
        assert len(node_names) == len(separate_names) - 5
