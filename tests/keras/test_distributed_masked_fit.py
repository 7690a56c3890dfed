"""Masked sequence losses under distribution strategies: ``fit`` of an Embedding(mask_zero)
/ Masking + LSTM tagger under ``MirroredStrategy`` on two logical CPUs follows tf-keras's
``MirroredStrategy`` (each replica's masked ``sum_over_batch_size`` loss over its own
unmasked steps, scaled by the replica count), equals one device when the replicas hold as
many real steps, and ``MultiWorkerMirroredStrategy`` on two worker processes equals the
in-process strategy fed the same global batches."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.cluster import run_chief_and_worker
from flowmesh.testing.keras_oracle import v1_metric_names
from flowmesh.testing.tf_oracle import session_config
from tests.rnn.oracle import require_rnn_oracle

WORKER = os.path.join(os.path.dirname(__file__), "mwms_masked_fit_worker.py")


def _worker_module():
    spec = importlib.util.spec_from_file_location("mwms_masked_fit_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


W = _worker_module()


def _fit(lib, strategy, case, weights=None, weighting=None, rows=slice(None)):
    ids, x, y, temporal = W.data()
    mode = "temporal" if weighting == "temporal" else None
    if strategy is not None:
        with strategy.scope():
            model = W.make_model(lib, case, mode)
    else:
        model = W.make_model(lib, case, mode)
    weights = model.get_weights() if weights is None else weights
    model.set_weights(weights)
    inputs = (ids if case == "mask_zero" else x)[rows]
    extra = {"sample_weight": temporal if mode else temporal[:, 0]} if weighting else {}
    history = model.fit(inputs, y, epochs=3, batch_size=8, shuffle=False, verbose=0, **extra).history
    return weights, history, model.get_weights()


@pytest.mark.parametrize("case,weighting", [("mask_zero", None), ("masking", "per_sample")])
def test_mirrored_masked_fit_follows_tf_keras_mirrored(case, weighting):
    """The first batch's replicas hold 14 and 17 real steps (mask_zero): tf-keras averages
    the two replicas' masked means, which is not the mean over all 31 steps."""
    tf1 = require_rnn_oracle()
    tf1.experimental.output_all_intermediates(True)
    from tf_keras.src import backend as tf_keras_backend

    config = session_config(tf1)
    config.device_count["CPU"] = 2
    with tf1.Graph().as_default() as graph:
        tf_keras_backend.set_session(tf1.Session(graph=graph, config=config))
        strategy = tf1.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        weights, expected, expected_weights = _fit(tf1, strategy, case, weighting=weighting)
    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        _, got, got_weights = _fit(tf, strategy, case, weights, weighting)
    expected = v1_metric_names(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6, err_msg=key)
    for a, b in zip(got_weights, expected_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


# Both halves of each batch of 8 hold as many real steps.
BALANCED = [0, 1, 2, 3, 0, 1, 2, 3, 8, 9, 10, 11, 8, 9, 10, 11]


@pytest.mark.parametrize("case,weighting", [("mask_zero", None), ("masking", "temporal")])
def test_mirrored_masked_fit_equals_one_device_when_replicas_hold_as_many_steps(case, weighting):
    """tf-keras refuses sample_weight_mode and weighted_metrics under a strategy in graph mode
    (its eager Keras takes [batch, time] weights there); flowmesh takes them."""
    with tf.Graph().as_default():
        weights, expected, expected_weights = _fit(tf, None, case, weighting=weighting, rows=BALANCED)
    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        _, got, got_weights = _fit(tf, strategy, case, weights, weighting, rows=BALANCED)
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for a, b in zip(got_weights, expected_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert got["loss"][-1] < got["loss"][0]


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_multi_worker_masked_fit_equals_the_in_process_strategy():
    """Worker r takes rows r, r+2, ... (4 per step): replica r of the in-process strategy
    fed the interleaved rows sees the same shard, so losses and weights agree."""
    results = run_chief_and_worker(WORKER, timeout=200)
    assert sorted(results) == [0, 1]
    ids, _, y, _ = W.data()
    order = np.concatenate([np.arange(0, 16, 2)[j:j + 4].tolist() + np.arange(1, 16, 2)[j:j + 4].tolist()
                            for j in (0, 4)])
    with tf.Graph().as_default():
        with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
            model = W.make_model(tf, "mask_zero")
        model.set_weights(W.initial_weights(model))
        expected = model.fit(ids[order], y[order], epochs=2, batch_size=8, shuffle=False, verbose=0).history
        expected_weights = model.get_weights()
    for rank in (0, 1):
        for key in expected:
            np.testing.assert_allclose(results[rank]["history"][key], expected[key], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{key} on worker {rank}")
        for a, b in zip(results[rank]["weights"], expected_weights):
            np.testing.assert_allclose(np.asarray(a, np.float32), b, rtol=1e-5, atol=1e-6)
