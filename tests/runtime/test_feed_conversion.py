"""Feed values are converted to the placeholder's dtype as TensorFlow converts them."""

from __future__ import annotations

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def _feed(module, value: object) -> object:
    """``x + 1`` with ``value`` fed to an int32 scalar placeholder, or the error type."""
    graph = module.Graph()
    with graph.as_default():
        x = module.placeholder(module.int32, [])
        y = x + 1
    with module.Session(graph=graph) as sess:
        try:
            return int(sess.run(y, {x: value}))
        except (TypeError, ValueError, module.errors.OpError) as exc:
            return type(exc).__name__


@pytest.mark.parametrize("value", [1.5, -2.7, 2.0, 7, 2**40, -(2**31) - 1])
def test_feeding_an_int32_placeholder_matches_tensorflow(value):
    # TensorFlow truncates a float fed to an integer placeholder (1.5 -> 1; numpy's
    # conversion) and refuses a Python int the type cannot hold with a TypeError
    tf1 = require_tensorflow()
    assert _feed(tf, value) == _feed(tf1, value)


def test_an_integer_too_large_for_the_placeholder_says_which_type_to_use():
    x = tf.placeholder(tf.int32, [], name="count")
    with tf.Session() as sess, pytest.raises(TypeError, match=r"larger type \(e\.g\. int64\)"):
        sess.run(x, {x: 2**40})
