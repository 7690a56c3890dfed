"""Buffer forwarding: elementwise ops run in place only where nobody can observe it."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from flowmesh.kernels.inplace import UNARY


def _program(sess: tf.Session, fetches: list, feeds: list) -> object:
    return sess._backend.plan_for(fetches, feeds, []).programs[0]


def _inplace_nodes(program: object) -> set[str]:
    from flowmesh.kernels.inplace import BINARY

    variants = set(UNARY.values()) | {fn for pair in BINARY.values() for fn in pair if fn}
    return {node.name for node in program.nodes if node.fn in variants}


def test_chain_runs_in_place_and_matches_numpy() -> None:
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    b = tf.constant([0.5, -1.0, 2.0, 0.0], name="b")
    y = tf.tanh(tf.matmul(x, tf.ones([4, 4])) + b, name="t")
    z = tf.abs(y * 2.0 - 1.0, name="z")
    value = np.arange(8, dtype=np.float32).reshape(2, 4) / 10
    with tf.Session() as sess:
        got = sess.run(z, {x: value})
        forwarded = _inplace_nodes(_program(sess, [z], [x]))
    expected = np.abs(np.tanh(value @ np.ones((4, 4), np.float32) + [0.5, -1.0, 2.0, 0.0]) * 2 - 1)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert {"add", "t", "mul", "sub", "z"} <= forwarded
    assert value[0, 1] == np.float32(0.1)  # the fed array is untouched


def test_values_with_several_readers_or_fetched_are_not_overwritten() -> None:
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.exp(x * 1.0, name="y")          # read by two ops
    a = tf.tanh(y, name="a")
    b = tf.sqrt(y, name="b")
    c = tf.square(a + 0.0, name="c")
    value = np.array([0.1, 0.2, 0.3], np.float32)
    with tf.Session() as sess:
        got_y, got_a, got_b, got_c = sess.run([y, a, b, c], {x: value})
        forwarded = _inplace_nodes(_program(sess, [y, a, b, c], [x]))
    np.testing.assert_allclose(got_y, np.exp(value), rtol=1e-6)
    np.testing.assert_allclose(got_a, np.tanh(np.exp(value)), rtol=1e-6)
    np.testing.assert_allclose(got_b, np.sqrt(np.exp(value)), rtol=1e-6)
    np.testing.assert_allclose(got_c, np.tanh(np.exp(value)) ** 2, rtol=1e-6)
    assert "a" not in forwarded and "b" not in forwarded  # y has two readers
    assert "c" in forwarded  # a + 0.0 is read once and not fetched


def test_variables_feeds_and_constants_are_never_overwritten() -> None:
    w = tf.Variable([1.0, -2.0], name="w")
    c = tf.constant([3.0, -4.0], name="c")
    x = tf.placeholder(tf.float32, [2], name="x")
    out = tf.abs(w) + tf.abs(c) + tf.abs(x)
    value = np.array([-5.0, 6.0], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            np.testing.assert_array_equal(sess.run(out, {x: value}), [9.0, 12.0])
        np.testing.assert_array_equal(sess.run(w), [1.0, -2.0])
    np.testing.assert_array_equal(value, [-5.0, 6.0])


def test_broadcast_that_grows_the_input_is_not_in_place() -> None:
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    row = tf.constant([[1.0, 2.0, 3.0]])
    grown = tf.add(tf.exp(x), row, name="grown")   # [n,1] + [1,3] -> [n,3]
    scaled = tf.multiply(tf.exp(x), 2.0, name="scaled")
    with tf.Session() as sess:
        got, got2 = sess.run([grown, scaled], {x: [[0.0], [1.0]]})
        forwarded = _inplace_nodes(_program(sess, [grown, scaled], [x]))
    np.testing.assert_allclose(got, np.exp([[0.0], [1.0]]) + [[1.0, 2.0, 3.0]], rtol=1e-6)
    np.testing.assert_allclose(got2, np.exp([[0.0], [1.0]]) * 2, rtol=1e-6)
    assert "grown" not in forwarded and "scaled" in forwarded


def test_integer_ops_are_not_forwarded() -> None:
    x = tf.placeholder(tf.int32, [2], name="x")
    out = tf.abs(x * 2, name="out")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: [-1, 2]}), [2, 4])
        assert "out" not in _inplace_nodes(_program(sess, [out], [x]))


def test_training_step_with_forwarding_matches_plain_math() -> None:
    x = tf.constant(np.eye(2, 3, dtype=np.float32))
    w = tf.Variable(np.full((3, 2), 0.5, np.float32), name="w")
    loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        # d loss / d w = x^T @ ones (every relu input is positive)
        expected = 0.5 - 0.1 * (np.eye(2, 3).T @ np.ones((2, 2)))
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-6)


def test_collectives_are_told_which_inputs_they_may_take_over() -> None:
    """A collective with a dead fresh input and a live one gets a per-input donation mask."""
    import dataclasses

    from flowmesh.runtime.forwarding import forward_buffers

    @dataclasses.dataclass
    class Node:
        name: str
        op: object
        fn: object
        inputs: tuple
        outputs: tuple
        needs_step: bool = False

    @dataclasses.dataclass
    class Op:
        type: str

    masks = []

    def collective(*args: object) -> None:
        return None

    collective.donating = lambda mask: masks.append(mask) or collective  # type: ignore[attr-defined]
    nodes = [Node("mm", Op("MatMul"), None, ("x",), ("g0",)),
             Node("var", Op("ReadVariableOp"), None, (), ("g1",)),
             Node("mm2", Op("MatMul"), None, ("x",), ("g2",)),
             Node("reduce", Op("CollectiveAllReduceStart"), collective, ("g0", "g1", "g2"),
                  ("h",), needs_step=True),
             Node("other", Op("Identity"), None, ("g2",), ("y",))]
    forward_buffers(nodes, feed_keys=["x"], fetch_keys=["h", "y"])
    assert masks == [(True, False, False)]  # g1: a variable's value; g2: read twice
