"""A control dependency on a fed tensor's op is satisfied by the feed (as in TensorFlow)."""

import flowmesh as tf


def test_control_dependency_on_a_fed_placeholder():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None], name="x")
        v = tf.Variable(0.0)
        with tf.control_dependencies([x]):
            y = v.assign_add(1.0)
        with tf.Session(graph=g) as sess:
            sess.run(v.initializer)
            assert sess.run(y, {x: [1.0]}) == 1.0
            assert sess.run(y, {x: [2.0]}) == 2.0
