"""Fused updates over many small variables keep each column in one buffer
(kernels/coalesced.py): same numbers as one kernel per variable, and the variables stay
ordinary variables (assign, restore, reads)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels import coalesced

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
}


def _graph(make_opt, count: int = 20, shape=(3, 2)):
    rng = np.random.default_rng(0)
    params = [tf.Variable(rng.standard_normal(shape).astype(np.float32), name=f"v{i}") for i in range(count)]
    x = tf.constant(np.linspace(-1, 1, shape[-1], dtype=np.float32))
    loss = tf.add_n([tf.reduce_sum(tf.tanh(v * x + float(i))) for i, v in enumerate(params)])
    return params, make_opt().minimize(loss)


def _train(make_opt, steps: int = 3) -> tuple[list[np.ndarray], list]:
    graph = tf.Graph()
    with graph.as_default():
        params, train = _graph(make_opt)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            states = [sess._backend.devices.devices[0].resources.lookup("", v.op.name) for v in params]
            return sess.run(tf.global_variables()), [s.value for s in states]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_coalesced_updates_match_one_kernel_per_variable(name, monkeypatch):
    import flowmesh.runtime.executor as executor

    together, values = _train(OPTIMIZERS[name])
    assert len({v.untyped_storage().data_ptr() for v in values}) == 1  # views of one buffer
    monkeypatch.setattr(executor, "fuse_updates", list)
    separate, separate_values = _train(OPTIMIZERS[name])
    assert len({v.untyped_storage().data_ptr() for v in separate_values}) == len(separate_values)
    for a, b in zip(together, separate):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_assign_and_restore_between_coalesced_updates(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        params, train = _graph(OPTIMIZERS["momentum"])
        saver = tf.train.Saver()
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            path = saver.save(sess, str(tmp_path / "ckpt"))
            expected = sess.run(params)
            params[3].load(np.full((3, 2), 7.0, np.float32), sess)  # in place, into the buffer
            assert sess.run(params[3])[0, 0] == 7.0
            sess.run(train)
            saver.restore(sess, path)  # new tensors: the next update moves them again
            np.testing.assert_array_equal(sess.run(params[3]), expected[3])
            sess.run(train)
            after_restore = sess.run(params)
    with tf.Graph().as_default():
        params, train = _graph(OPTIMIZERS["momentum"])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            tf.train.Saver().restore(sess, path)
            sess.run(train)
            for a, b in zip(after_restore, sess.run(params)):
                np.testing.assert_allclose(a, b, rtol=1e-6)


def test_few_or_big_variables_keep_their_own_storage():
    import torch

    assert not coalesced.worth_coalescing([torch.zeros(3)] * (coalesced.MIN_VARIABLES - 1))
    assert not coalesced.worth_coalescing([torch.zeros(coalesced.MAX_AVERAGE_ELEMENTS + 1)] * 20)
    assert not coalesced.worth_coalescing([torch.zeros(3)] * 19 + [torch.zeros(3, dtype=torch.float64)])
    assert coalesced.worth_coalescing([torch.zeros(3)] * 20)
