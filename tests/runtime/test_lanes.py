"""Lane batching (runtime/lanes.py): runs of the same small ops repeated once per variable
give the values op-by-op execution gives, and become one node each."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels import lane_ops

LANES = 10


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flat(item)]
    return [value]


def _run(build, monkeypatch, lanes: str, steps: int = 1) -> tuple[list, list[str]]:
    """Runs ``build() -> (fetches, feed_dict, train_op or None)`` ``steps`` times; returns
    the last fetched values, the variables after, and the program's node types."""
    monkeypatch.setenv("FLOWMESH_LANES", lanes)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(3)
        fetches, feed, train = build()
        targets = [train] if train is not None else []
        variables = tf.global_variables()
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                values = sess.run([fetches, targets], feed)[0]
            feeds = list(feed) if feed else []
            plan = sess._backend.plan_for(_flat(fetches), feeds, targets)
            types = [n.op_type for p in plan.programs for n in p.nodes]
            return [values, sess.run(variables)], types


def _compare(build, monkeypatch, steps: int = 1, batched: bool = True, rtol: float = 1e-6) -> list[str]:
    ours, types = _run(build, monkeypatch, "1", steps)
    plain, plain_types = _run(build, monkeypatch, "0", steps)
    assert "_Lanes" not in plain_types
    for a, b in zip(_flat(ours), _flat(plain)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)
    assert ("_Lanes" in types) == batched, types
    return types


def _variables(width: int = 4, low: float = 0.5, high: float = 1.5, shape=None) -> list:
    rng = np.random.default_rng(0)
    return [tf.Variable(rng.uniform(low, high, shape or [width]).astype(np.float32), name=f"v{i}")
            for i in range(LANES)]


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_many_variable_training_matches_op_by_op(optimizer, monkeypatch):
    def build():
        params = _variables()
        x = tf.placeholder(tf.float32, [4])
        loss = tf.add_n([tf.reduce_sum(tf.square(v * x - 0.3)) for v in params])
        opt = {"sgd": tf.train.GradientDescentOptimizer(0.05), "momentum": tf.train.MomentumOptimizer(0.05, 0.9),
               "adam": tf.train.AdamOptimizer(0.05)}[optimizer]
        return loss, {x: np.linspace(0.1, 1.0, 4).astype(np.float32)}, opt.minimize(loss)

    types = _compare(build, monkeypatch, steps=3)
    assert types.count("_Lanes") >= 3 and "Square" not in types and "Sum" not in types


def _binary_cases():
    unary = sorted(lane_ops.ELEMENTWISE - {"AddN", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
                                           "SquaredDifference", "Pow", "ReluGrad", "Cast"})
    return unary


@pytest.mark.parametrize("op_type", _binary_cases())
def test_unary_elementwise_lanes(op_type, monkeypatch):
    from flowmesh.ops._builders import make_tensor

    def build():
        x = tf.placeholder(tf.float32, [3, 4])
        outs = [make_tensor(op_type, [v * x]) for v in _variables()]
        return outs + [tf.add_n(outs)], {x: np.full([3, 4], 0.7, np.float32)}, None

    _compare(build, monkeypatch)


@pytest.mark.parametrize("op_type", ["AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference",
                                     "Pow", "ReluGrad"])
def test_binary_elementwise_lanes_broadcast_against_shared_values(op_type, monkeypatch):
    """A lane value of rank 1 against a shared one of rank 2 (of rank 1 where the op does not
    broadcast), in both operand positions."""
    from flowmesh.ops._builders import make_tensor

    def build():
        x = tf.placeholder(tf.float32, [4] if op_type in lane_ops.SAME_SHAPE else [3, 4])
        params = _variables(low=-1.0)
        positive = tf.abs(x) + 0.5 if op_type == "Pow" else x
        left = [make_tensor(op_type, [tf.abs(v) + 0.5, x]) for v in params]
        right = [make_tensor(op_type, [positive, tf.identity(v)]) for v in params]
        value = np.linspace(-1.0, 2.0, 12).reshape(3, 4).astype(np.float32)
        return left + right, {x: value[0] if op_type in lane_ops.SAME_SHAPE else value}, None

    _compare(build, monkeypatch)


def test_reductions_reshapes_broadcasts_and_casts(monkeypatch):
    def build():
        params = _variables(shape=[2, 3])
        outs = []
        for v in params:
            a = tf.reduce_sum(v, axis=1, keepdims=True) + tf.reduce_mean(v, axis=[0, -1])
            b = tf.reshape(tf.expand_dims(tf.squeeze(tf.reshape(v, [1, 6])), 0), [3, 2])
            c = tf.broadcast_to(tf.reduce_sum(v), [2, 2]) + tf.nn.l2_loss(v)
            outs.append(tf.cast(a, tf.float64) + tf.cast(tf.reduce_sum(b) + tf.reduce_sum(c), tf.float64))
        return outs, None, None

    types = _compare(build, monkeypatch)
    assert not {"Sum", "Mean", "Reshape", "Squeeze", "ExpandDims", "BroadcastTo", "L2Loss", "Cast"} & set(types)


def test_lanes_with_different_constants_and_values_read_outside(monkeypatch):
    def build():
        params = _variables()
        scaled = [v * float(i + 1) for i, v in enumerate(params)]  # a constant per lane
        squares = [tf.square(s) for s in scaled]
        return [squares[3], tf.add_n(squares), tf.stack(scaled)], None, None

    types = _compare(build, monkeypatch)
    assert "AddN" in types and "Pack" in types


def test_lanes_that_read_each_other_or_write_stay_op_by_op(monkeypatch):
    def chain():
        h = tf.constant(np.ones(4, np.float32))
        for _ in range(LANES):
            h = tf.tanh(h * 0.9)  # every lane reads the previous lane
        return h, None, None

    _compare(chain, monkeypatch, batched=False)

    def writes():
        params = _variables()
        updates = [v.assign_add(tf.square(v)) for v in params]  # the write ends every lane
        return updates, None, None

    _compare(writes, monkeypatch, steps=2, batched=False)


def test_weight_decay_and_global_norm_clipping(monkeypatch):
    """The per-variable terms of a real training step: L2 weight decay, gradients clipped
    by their global norm, momentum."""
    def build():
        params = _variables(width=6)
        x = tf.placeholder(tf.float32, [6])
        loss = tf.add_n([tf.reduce_sum(tf.tanh(v * x)) for v in params])
        loss += 1e-2 * tf.add_n([tf.nn.l2_loss(v) for v in params])
        grads, norm = tf.clip_by_global_norm(tf.gradients(loss, params), 0.5)
        train = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients(list(zip(grads, params)))
        return [loss, norm], {x: np.linspace(-1, 1, 6).astype(np.float32)}, train

    _compare(build, monkeypatch, steps=3, rtol=1e-5)


@pytest.mark.oracle
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_many_small_variables_train_as_tensorflow(optimizer):
    """Lanes and coalesced updates together (20 variables) against TensorFlow's step."""
    from flowmesh.testing.tf_oracle import require_tensorflow, session_config

    tf1 = require_tensorflow()
    results = []
    for system, config in ((tf, None), (tf1, session_config(tf1))):
        rng = np.random.default_rng(5)
        graph = system.Graph()
        with graph.as_default():
            x = system.placeholder(system.float32, [8])
            params = [system.Variable(rng.standard_normal(8).astype(np.float32) * 0.1) for _ in range(20)]
            loss = system.add_n([system.reduce_sum(system.square(v * x)) for v in params])
            opt = (system.train.GradientDescentOptimizer(0.05) if optimizer == "sgd"
                   else system.train.AdamOptimizer(0.01))
            train = opt.minimize(loss)
            with system.Session(graph=graph, config=config) as sess:
                sess.run(system.global_variables_initializer())
                losses = [sess.run([train, loss], {x: np.linspace(0, 1, 8, dtype=np.float32) * (i + 1)})[1]
                          for i in range(4)]
                results.append((losses, sess.run(params)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
