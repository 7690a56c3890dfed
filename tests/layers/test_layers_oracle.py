"""tf.layers against TensorFlow's (tf-keras legacy layers): same weights -> same outputs,
gradients, update ops and variable names."""

import numpy as np
import pytest

from flowmesh.testing.keras_oracle import compare_layer

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(0)
IMG = RNG.standard_normal((3, 8, 8, 3)).astype(np.float32)
SEQ = RNG.standard_normal((3, 10, 4)).astype(np.float32)
VEC = RNG.standard_normal((5, 6)).astype(np.float32)
VEC3 = RNG.standard_normal((2, 3, 6)).astype(np.float32)
VOL = RNG.standard_normal((2, 3, 4, 4, 3)).astype(np.float32)

CASES = {
    "dense": (lambda tf, L, x: L.dense(x, 4, activation=tf.nn.relu), VEC),
    "dense_rank3": (lambda tf, L, x: L.dense(x, 4, use_bias=False), VEC3),
    "dense_twice_named": (lambda tf, L, x: L.dense(L.dense(x, 5, name="fc1"), 3, activation=tf.nn.tanh), VEC),
    "dense_reuse": (lambda tf, L, x: L.dense(x, 6, name="s") + L.dense(x, 6, name="s", reuse=True), VEC),
    "dense_scopes": (lambda tf, L, x: _scoped(tf, L, x), VEC),
    "dense_class_called_twice": (lambda tf, L, x: _twice(tf, L, x), VEC),
    "conv1d": (lambda tf, L, x: L.conv1d(x, 5, 3, strides=2, padding="same"), SEQ),
    "conv2d_valid": (lambda tf, L, x: L.conv2d(x, 4, 3, activation=tf.nn.relu), IMG),
    "conv2d_same_strided": (lambda tf, L, x: L.conv2d(x, 4, (3, 2), strides=2, padding="same"), IMG),
    "conv2d_transpose": (lambda tf, L, x: L.conv2d_transpose(x, 2, 3, strides=2, padding="same"), IMG),
    "conv2d_transpose_valid": (lambda tf, L, x: L.conv2d_transpose(x, 2, 3, strides=2), IMG),
    "max_pooling1d": (lambda tf, L, x: L.max_pooling1d(x, 2, 2), SEQ),
    "average_pooling1d": (lambda tf, L, x: L.average_pooling1d(x, 3, 2, padding="same"), SEQ),
    "max_pooling2d": (lambda tf, L, x: L.max_pooling2d(x, 2, 2), IMG),
    "average_pooling2d": (lambda tf, L, x: L.average_pooling2d(x, 3, 2, padding="same"), IMG),
    "flatten": (lambda tf, L, x: L.dense(L.flatten(x), 3), IMG),
    "dropout_inference": (lambda tf, L, x: L.dropout(x, 0.5), VEC),
    "bn_fused_training": (lambda tf, L, x: L.batch_normalization(x, training=True), IMG),
    "bn_fused_inference": (lambda tf, L, x: L.batch_normalization(x, momentum=0.9), IMG),
    "bn_dense_training": (lambda tf, L, x: L.batch_normalization(x, training=True, momentum=0.5), VEC),
    "bn_training_tensor": (lambda tf, L, x: L.batch_normalization(
        x, training=tf.placeholder_with_default(True, []), momentum=0.8, epsilon=0.01), IMG),
    "bn_axis1": (lambda tf, L, x: L.batch_normalization(x, axis=1, training=True), IMG),
    "bn_fused_5d": (lambda tf, L, x: L.batch_normalization(x, training=True, momentum=0.5), VOL),
    "cnn": (lambda tf, L, x: L.dense(L.flatten(L.max_pooling2d(
        L.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu), 2, 2)), 3), IMG),
}


def _scoped(tf, L, x):
    with tf.variable_scope("outer"):
        a = L.dense(x, 3)
        b = L.dense(x, 3)
    with tf.variable_scope("outer", reuse=True):
        c = L.dense(x, 3)
    return a + b + c


def _twice(tf, L, x):
    layer = L.Dense(6, name="shared")
    return layer(layer(x))


@pytest.mark.parametrize("case", sorted(CASES))
def test_layer_matches_tensorflow(case):
    build, value = CASES[case]
    compare_layer(build, value)
