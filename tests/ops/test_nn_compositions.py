"""1-D pooling / transposed convolution, TensorFlow 2 N-d spellings, depthwise backprops,
approx top-k, log-Poisson loss, sufficient statistics: the oracle table."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

SEQ = Input((2, 7, 3))
IMG = Input((1, 5, 5, 2))
F2 = Input((3, 3, 2, 2))

SPECS = [
    OpSpec("max_pool1d", lambda tf, x: tf.nn.max_pool1d(x, 2, 2, "VALID"), (Input((2, 6, 3), kind="distinct"),)),
    OpSpec("avg_pool1d/same", lambda tf, x: tf.nn.avg_pool1d(x, 3, 2, "SAME"), (SEQ,)),
    OpSpec("max_pool_v2/2d", lambda tf, x: tf.nn.max_pool_v2(x, 2, 1, "SAME"), (Input((1, 4, 4, 2), kind="distinct"),)),
    OpSpec("avg_pool_v2/1d", lambda tf, x: tf.nn.avg_pool_v2(x, [2], [1], "VALID"), (SEQ,)),
    OpSpec("pool/max2d", lambda tf, x: tf.nn.pool(x, [2, 2], "MAX", "VALID", strides=[2, 2]),
           (Input((1, 4, 4, 2), kind="distinct"),)),
    OpSpec("pool/avg1d", lambda tf, x: tf.nn.pool(x, [3], "AVG", "SAME"), (SEQ,)),
    OpSpec("convolution/1d", lambda tf, x, f: tf.nn.convolution(x, f, "SAME", strides=[2]), (SEQ, Input((3, 3, 4)))),
    OpSpec("convolution/2d_dilated", lambda tf, x, f: tf.nn.convolution(x, f, "VALID", dilation_rate=[2, 2]),
           (IMG, Input((2, 2, 2, 3)))),
    OpSpec("conv1d_transpose", lambda tf, x, f: tf.nn.conv1d_transpose(x, f, [2, 7, 2], 2, "SAME"),
           (Input((2, 4, 3)), Input((3, 2, 3)))),
    OpSpec("conv_transpose/2d", lambda tf, x, f: tf.nn.conv_transpose(x, f, [1, 5, 5, 2], [1, 1, 1, 1], "SAME"),
           (Input((1, 5, 5, 3)), Input((3, 3, 2, 3)))),
    OpSpec("depthwise_backprop_input",
           lambda tf, f, g: tf.nn.depthwise_conv2d_native_backprop_input([1, 5, 5, 2], f, g, [1, 1, 1, 1], "VALID"),
           (F2, Input((1, 3, 3, 4)))),
    OpSpec("depthwise_backprop_filter",
           lambda tf, x, g: tf.nn.depthwise_conv2d_native_backprop_filter(x, [3, 3, 2, 2], g, [1, 1, 1, 1], "VALID"),
           (IMG, Input((1, 3, 3, 4)))),
    OpSpec("approx_max_k", lambda tf, x: tf.nn.approx_max_k(x, 2), (Input((2, 5), kind="distinct"),), oracle=False,
           reference=lambda x: [np.sort(x, 1)[:, ::-1][:, :2], np.argsort(-x, 1)[:, :2].astype(np.int32)]),
    OpSpec("approx_min_k", lambda tf, x: tf.nn.approx_min_k(x, 2), (Input((2, 5), kind="distinct"),), oracle=False,
           reference=lambda x: [np.sort(x, 1)[:, :2], np.argsort(x, 1)[:, :2].astype(np.int32)]),
    OpSpec("log_poisson_loss", lambda tf, z, c: tf.nn.log_poisson_loss(z, c), (Input((4,), low=0, high=3), Input((4,))),
           reference=lambda z, c: np.exp(c) - c * z),
    OpSpec("log_poisson_loss/full", lambda tf, z, c: tf.nn.log_poisson_loss(z, c, compute_full_loss=True),
           (Input((4,), low=1.5, high=3, diff=False), Input((4,)))),
    OpSpec("sufficient_statistics", lambda tf, x: tf.nn.sufficient_statistics(x, [0, 1])[:3], (Input((2, 3, 2)),)),
    OpSpec("sufficient_statistics/shift", lambda tf, x: tf.nn.sufficient_statistics(x, [1], shift=0.5)[:3],
           (Input((2, 3)),)),
    OpSpec("batch_norm_with_global_normalization",
           lambda tf, x, m, v, b, g: tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 0.001, True),
           (Input((2, 3)), Input((3,)), Input((3,), low=0.5, high=2), Input((3,)), Input((3,)))),
    OpSpec("compute_average_loss", lambda tf, x: tf.nn.compute_average_loss(x), (Input((4,)),), oracle=False,
           reference=lambda x: np.sum(x) / 4),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_nn_compositions(spec):
    OpHarness(spec).check()


ORACLE = [s for s in SPECS if s.oracle]


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE, ids=spec_ids(ORACLE))
def test_nn_compositions_match_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_loss_scaling_follows_the_strategy():
    import flowmesh as tf

    with tf.Graph().as_default():
        loss = tf.constant([1.0, 2.0, 3.0, 6.0])
        outside = [tf.nn.compute_average_loss(loss), tf.nn.scale_regularization_loss(tf.constant(4.0))]
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        with strategy.scope():
            inside = [tf.nn.compute_average_loss(loss), tf.nn.scale_regularization_loss(tf.constant(4.0))]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            assert sess.run(outside) == [3.0, 4.0]
            assert sess.run(inside) == [1.5, 2.0]
