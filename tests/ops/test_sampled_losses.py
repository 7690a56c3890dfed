"""nce_loss / sampled_softmax_loss (oracle table with fixed sampled values: values and
gradients equal TensorFlow's), candidate samplers and compute_accidental_hits."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

NUM_CLASSES = 7
LABELS = np.array([[1], [4], [2]], np.int64)
LABELS2 = np.array([[1, 3], [4, 0], [2, 2]], np.int64)
SAMPLED = np.array([0, 2, 5, 6], np.int64)  # 2 is a true class of row 2: an accidental hit
TRUE_EXP = np.array([[0.3], [0.2], [0.25]], np.float32)
TRUE_EXP2 = np.array([[0.3, 0.4], [0.2, 0.6], [0.25, 0.25]], np.float32)
SAMPLED_EXP = np.array([0.5, 0.3, 0.2, 0.1], np.float32)
INPUTS, WEIGHTS, BIASES = Input((3, 4)), Input((NUM_CLASSES, 4)), Input((NUM_CLASSES,))


def _values(tf, true_exp):
    return (tf.constant(SAMPLED), tf.constant(true_exp), tf.constant(SAMPLED_EXP))


def _loss(fn, labels, true_exp, **kw):
    def build(tf, x, w, b):
        return getattr(tf.nn, fn)(w, b, tf.constant(labels), x, len(SAMPLED), NUM_CLASSES,
                                  num_true=labels.shape[1], sampled_values=_values(tf, true_exp), **kw)
    return build


SPECS = [
    OpSpec("nce_loss", _loss("nce_loss", LABELS, TRUE_EXP), (INPUTS, WEIGHTS, BIASES)),
    OpSpec("nce_loss/num_true2_remove_hits", _loss("nce_loss", LABELS2, TRUE_EXP2, remove_accidental_hits=True),
           (INPUTS, WEIGHTS, BIASES)),
    OpSpec("sampled_softmax_loss", _loss("sampled_softmax_loss", LABELS, TRUE_EXP), (INPUTS, WEIGHTS, BIASES)),
    OpSpec("sampled_softmax_loss/keep_hits_num_true2",
           _loss("sampled_softmax_loss", LABELS2, TRUE_EXP2, remove_accidental_hits=False),
           (INPUTS, WEIGHTS, BIASES)),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_sampled_losses(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_sampled_losses_match_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def _run_both(build):
    tf1 = require_tensorflow()
    results = []
    for lib, config in ((tf, None), (tf1, session_config(tf1))):
        with lib.Graph().as_default() as g, lib.Session(graph=g, config=config) as sess:
            results.append(sess.run(build(lib)))
    return results


def test_compute_accidental_hits_matches_tensorflow():
    ours, theirs = _run_both(lambda lib: lib.nn.compute_accidental_hits(LABELS2, SAMPLED, num_true=2))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_all_candidate_sampler_and_non_unique_expected_counts_match_tensorflow():
    ours, theirs = _run_both(lambda lib: lib.nn.all_candidate_sampler(LABELS2, 2, 5, True))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    for name in ("log_uniform_candidate_sampler", "uniform_candidate_sampler"):
        ours, theirs = _run_both(lambda lib, n=name: getattr(lib.nn, n)(LABELS2, 2, 6, False, 50, seed=3))
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)  # depends only on the classes
        assert ours[0].dtype == np.int64 and ours[0].shape == (6,) and ((0 <= ours[0]) & (ours[0] < 50)).all()


def test_log_uniform_sampler_distribution_and_unique_counts():
    with tf.Graph().as_default():
        sampled, true_exp, sampled_exp = tf.random.log_uniform_candidate_sampler(
            LABELS, 1, 20, unique=True, range_max=100, seed=1)
        draws = tf.random.log_uniform_candidate_sampler(LABELS, 1, 4000, unique=False, range_max=100, seed=2)[0]
        with tf.Session() as sess:
            s, t, e, d = sess.run([sampled, true_exp, sampled_exp, draws])
    assert len(set(s.tolist())) == 20 and (e > 0).all() and (e <= 1).all() and (t > 0).all()
    p0 = np.log(2.0) / np.log(101.0)  # P(class 0)
    assert abs(np.mean(d == 0) - p0) < 0.03
