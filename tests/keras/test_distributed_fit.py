"""Keras fit under MirroredStrategy (two logical CPUs) and MultiWorkerMirroredStrategy (two
worker processes): the global batch is split over the replicas and training matches one
device fed the global batch."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.cluster import run_chief_and_worker

K = tf.keras
WORKER = os.path.join(os.path.dirname(__file__), "mwms_fit_worker.py")


def _worker_module():
    spec = importlib.util.spec_from_file_location("mwms_fit_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fit(model, weights, x, y, **kwargs):
    model.set_weights(weights)
    history = model.fit(x, y, shuffle=False, verbose=0, **kwargs)
    return history.history, model.get_weights()


def test_mirrored_strategy_matches_one_device():
    worker = _worker_module()
    x, y = worker.data()
    with tf.Graph().as_default():
        model = worker.make_model(K)
        weights = worker.initial_weights(model)
        expected, expected_weights = _fit(model, weights, x, y, batch_size=20, epochs=2, validation_split=0.25)
    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        with strategy.scope():
            model = worker.make_model(K)
        history, trained = _fit(model, weights, x, y, batch_size=20, epochs=2, validation_split=0.25)
        kernel = model.trainable_weights[0]
        first, second = K.backend.get_session().run([c.value() for c in kernel.components])
        np.testing.assert_array_equal(first, second)  # the replicas stay in sync
        assert model.evaluate(x, y, verbose=0)[0] > 0
    assert sorted(history) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(history[key], expected[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for a, b in zip(trained, expected_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_multi_worker_fit_matches_the_global_batch():
    results = run_chief_and_worker(WORKER, timeout=150)
    assert sorted(results) == [0, 1]
    worker = _worker_module()
    x, y = worker.data()
    # Worker r trains on rows r, r+2, ... with 8 rows per step: the global batch of step j is
    # worker 0's j-th 8 rows followed by worker 1's.
    order = np.concatenate([np.concatenate([np.arange(0, 96, 2)[j:j + 8], np.arange(1, 96, 2)[j:j + 8]])
                            for j in range(0, 48, 8)])
    with tf.Graph().as_default():
        model = worker.make_model(K)
        expected, expected_weights = _fit(model, worker.initial_weights(model), x[order], y[order],
                                          batch_size=16, epochs=2)
    for rank in (0, 1):
        for key in expected:
            np.testing.assert_allclose(results[rank]["history"][key], expected[key], rtol=1e-5, atol=1e-6)
        for a, b in zip(results[rank]["weights"], expected_weights):
            np.testing.assert_allclose(np.asarray(a, np.float32), b, rtol=1e-5, atol=1e-6)
