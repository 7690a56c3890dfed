"""The digits CNN example: stated accuracy, and the same loss curve as TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.datasets import load_digits
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

STEPS = 20


@pytest.mark.slow
def test_reaches_95_percent_with_defaults(example, capsys) -> None:
    cnn = example("digits_cnn")
    accuracy = cnn.main([])
    # 0.972-0.986 over the CPU code paths tried (ATEN_CPU_CAPABILITY=default/avx2/avx512):
    # 0.97 would be one digit of 360 from failing on another CPU's summation order.
    assert accuracy >= 0.95
    assert f"test accuracy {accuracy:.4f}" in capsys.readouterr().out


def _curve(tf, cnn, initial, batches, optimizer, rate, config=None):
    """Loss per step of the example's model built by ``tf`` from ``initial`` weights."""
    graph = tf.Graph()
    with graph.as_default():
        model = cnn.build_model(tf, optimizer=optimizer, learning_rate=rate, initial=initial)
        init = tf.global_variables_initializer()
    losses = []
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for xb, yb in batches:
            _, loss = sess.run([model["train_op"], model["loss"]], {model["x"]: xb, model["y"]: yb})
            losses.append(float(loss))
        final = sess.run(model["variables"])
    return np.array(losses), final


def _initial_weights(cnn):
    graph = flowmesh.Graph()
    with graph.as_default():
        flowmesh.set_random_seed(3)
        model = cnn.build_model(flowmesh)
        init = flowmesh.global_variables_initializer()
    with flowmesh.Session(graph=graph) as sess:
        sess.run(init)
        return sess.run(model["variables"])


@pytest.mark.oracle
# Rates on the stable side: at momentum 0.2 the curve is chaotic (a 1e-7 difference in one
# conv kernel's summation order grew 10x per step to 6e-3 by step 20 under
# ONEDNN_MAX_CPU_ISA=AVX2); at 0.15 every step agrees within ~1e-7 on every CPU path tried.
@pytest.mark.parametrize("optimizer,rate", [("momentum", 0.15), ("adam", 0.01)])
def test_loss_curve_matches_tensorflow_from_the_same_weights(example, optimizer, rate) -> None:
    tf1 = require_tensorflow()
    cnn = example("digits_cnn")
    (x_train, y_train), _ = load_digits(flatten=False)
    stream = cnn.batches(x_train, y_train, 64, seed=5)
    batches = [next(stream) for _ in range(STEPS)]
    initial = _initial_weights(cnn)
    ours, our_weights = _curve(flowmesh, cnn, initial, batches, optimizer, rate)
    theirs, their_weights = _curve(tf1, cnn, initial, batches, optimizer, rate, session_config(tf1))
    assert ours[-1] < 0.8 * ours[0]  # it learns
    np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=2e-4)
    for name, value in our_weights.items():
        np.testing.assert_allclose(value, their_weights[name], rtol=1e-2, atol=2e-3, err_msg=name)
