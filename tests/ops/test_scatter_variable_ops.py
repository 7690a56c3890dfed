"""scatter_mul/div/min/max and scatter_nd_update/add/sub on variables: final values equal
TensorFlow's (duplicate indices included where TensorFlow's result is defined)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

INIT = np.arange(1, 13, dtype=np.float32).reshape(4, 3) / 4.0
ROWS = np.array([[2.0, 0.5, -1.0], [3.0, 2.0, 0.25], [0.5, 4.0, 2.0]], np.float32)

CASES = {
    "scatter_mul": lambda lib, v: lib.scatter_mul(v, [0, 2, 0], ROWS),
    "scatter_div": lambda lib, v: lib.scatter_div(v, [1, 3, 1], ROWS),
    "scatter_min": lambda lib, v: lib.scatter_min(v, [3, 0, 3], ROWS),
    "scatter_max": lambda lib, v: lib.scatter_max(v, [2, 2, 1], ROWS),
    "scatter_nd_update": lambda lib, v: lib.scatter_nd_update(v, [[0, 1], [3, 2]], [9.0, -9.0]),
    "scatter_nd_add": lambda lib, v: lib.scatter_nd_add(v, [[1], [1], [2]], ROWS),
    "scatter_nd_sub": lambda lib, v: lib.scatter_nd_sub(v, [[2, 0], [2, 0]], [1.0, 2.0]),
}


def _final(lib, name, config=None):
    with lib.Graph().as_default() as g:
        v = lib.get_variable("v", initializer=lib.constant(INIT), use_resource=True)
        op = CASES[name](lib, v)
        with lib.Session(graph=g, config=config) as sess:
            sess.run(v.initializer)
            sess.run(op)
            return sess.run(v)


@pytest.mark.parametrize("name", list(CASES))
def test_scatter_matches_tensorflow(name):
    tf1 = require_tensorflow()
    ours = _final(tf, name)
    np.testing.assert_allclose(ours, _final(tf1, name, session_config(tf1)), rtol=1e-6)
    assert not np.allclose(ours, INIT)


def test_out_of_range_index_is_named():
    with tf.Graph().as_default():
        v = tf.Variable(INIT, name="w")
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="variable w"):
                sess.run(tf.scatter_nd_add(v, [[7, 0]], [1.0]))
