"""tf.edit_distance, tf.fingerprint and tf.check_pinned, compared with TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _edit(t):
    h = t.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0]], ["a", "b", "c", "d"], [2, 2, 2])
    tr = t.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1], [2, 0, 0]], ["a", "x", "c", "e", "z"], [3, 2, 2])
    hi = t.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0]], [1, 2, 3, 7], [2, 4])
    ti = t.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], [1, 3, 7, 7], [2, 3])
    return [t.edit_distance(h, tr), t.edit_distance(h, tr, normalize=False), t.edit_distance(hi, ti)]


def _fingerprints(t):
    return [t.fingerprint(t.constant(["abc", "", "hello world"])),
            t.fingerprint(t.constant([[1, 2], [3, 4]], t.int32)),
            t.fingerprint(t.constant([[b"a", b"bc"], [b"d", b""]])),
            t.fingerprint(t.constant(np.arange(24, dtype=np.float64).reshape(2, 3, 4))),
            t.fingerprint(t.constant([1.5, 2.0]))]


@pytest.mark.oracle
@pytest.mark.parametrize("build", [_edit, _fingerprints], ids=["edit_distance", "fingerprint"])
def test_matches_tensorflow(build):
    tf1 = require_tensorflow()
    results = []
    for lib, config in ((tf, None), (tf1, session_config(tf1))):
        with lib.Graph().as_default() as g, lib.Session(graph=g, config=config) as sess:
            fetches = build(lib)
            results.append(([f.shape.as_list() for f in fetches], sess.run(fetches)))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)


def test_check_pinned_reports_like_tensorflow():
    import torch

    with tf.Graph().as_default(), tf.Session() as sess:
        checked = tf.check_pinned(tf.constant([1.0, 2.0]))
        expected = tf.errors.InvalidArgumentError if torch.cuda.is_available() else tf.errors.FailedPreconditionError
        with pytest.raises(expected, match="CheckPinned"):
            sess.run(checked)


def test_edit_distance_and_fingerprint_check_arguments():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.edit_distance(tf.constant([1]), tf.constant([1]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 1"):
            tf.fingerprint(tf.constant(1))
