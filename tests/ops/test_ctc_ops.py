"""tf.nn.ctc_loss (sparse labels, blank last) and ctc_loss_v2 (dense labels, blank_index):
the oracle table (values and gradients vs TensorFlow; gradients vs finite differences)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

INDICES = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.int64)
VALUES = np.array([1, 2, 2, 3, 0], np.int32)
DENSE = np.array([[1, 2, 2], [3, 1, 0]], np.int32)
LOGITS = Input((6, 2, 5))  # [max_time, batch, num_classes]


def _sparse(tf, values=VALUES):
    return tf.SparseTensor(indices=INDICES, values=values, dense_shape=[2, 3])


SPECS = [
    OpSpec("ctc_loss", lambda tf, x: tf.nn.ctc_loss(_sparse(tf), x, [6, 5]), (LOGITS,)),
    OpSpec("ctc_loss/collapse_repeated",
           lambda tf, x: tf.nn.ctc_loss(_sparse(tf), x, [6, 4], preprocess_collapse_repeated=True), (LOGITS,)),
    OpSpec("ctc_loss/batch_major", lambda tf, x: tf.nn.ctc_loss(_sparse(tf), x, [6, 6], time_major=False),
           (Input((2, 6, 5)),)),
    OpSpec("ctc_loss_v2/dense_blank0",
           lambda tf, x: tf.nn.ctc_loss_v2(DENSE + 1, x, [3, 2], [6, 5], blank_index=0), (LOGITS,)),
    OpSpec("ctc_loss_v2/dense_blank_last",
           lambda tf, x: tf.nn.ctc_loss_v2(DENSE, x, [3, 2], [6, 6], blank_index=-1), (LOGITS,)),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_ctc(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_ctc_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_label_longer_than_input():
    with tf.Graph().as_default():
        x = tf.zeros([2, 2, 5])
        strict = tf.nn.ctc_loss(_sparse(tf), x, [2, 2])
        lenient = tf.nn.ctc_loss(_sparse(tf), x, [2, 2], ignore_longer_outputs_than_inputs=True)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="ignore_longer_outputs_than_inputs"):
                sess.run(strict)
            assert sess.run(lenient)[0] == 0.0
    with pytest.raises(tf.errors.UnimplementedError, match="ctc_merge_repeated"):
        tf.nn.ctc_loss(_sparse(tf), tf.zeros([6, 2, 5]), [6, 6], ctc_merge_repeated=False)
