"""tf.math.special's integrals (dawsn expint fresnel_cos fresnel_sin spence) against
TensorFlow over a range of inputs in float32 and float64, and their gradients."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

NAMES = ("dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence")
POINTS = np.concatenate([-np.logspace(-3, 2.5, 60), [0.0], np.logspace(-3, 2.5, 60),
                         np.linspace(0.9, 7.0, 40), [1.0, 1.5, 2.0, 6.0, 40.0]])


def _evaluate(tf, name, dtype, with_grad):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(POINTS.astype(dtype))
        y = getattr(tf.math.special, name)(x)
        fetches = [y, tf.gradients(tf.reduce_sum(y), x)[0]] if with_grad else [y]
        config = None if tf is flowmesh else session_config(tf)
        with tf.Session(graph=graph, config=config) as sess:
            return sess.run(fetches)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-9), (np.float32, 2e-5)])
@pytest.mark.parametrize("name", NAMES)
def test_values_match_tensorflow(name, dtype, rtol):
    tf1 = require_tensorflow()
    ours, = _evaluate(flowmesh, name, dtype, False)
    theirs, = _evaluate(tf1, name, dtype, False)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs), err_msg=f"{name}: NaN positions")
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(ours[~finite], theirs[~finite], err_msg=f"{name}: infinities")
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=rtol, atol=1e-300 if dtype == np.float64 else 1e-37,
                               err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_tensorflow(name):
    tf1 = require_tensorflow()
    ours = _evaluate(flowmesh, name, np.float64, True)[1]
    theirs = _evaluate(tf1, name, np.float64, True)[1]
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, err_msg=name)


def test_integer_input_is_rejected_with_the_allowed_types():
    with flowmesh.Graph().as_default(), pytest.raises(TypeError, match="float"):
        flowmesh.math.special.dawsn(flowmesh.constant([1, 2]))
