"""tf.keras layers against TensorFlow's Keras (tf-keras, graph mode): same weights -> same
outputs, gradients, moving statistics and weight names."""

import numpy as np
import pytest

from flowmesh.testing.keras_oracle import compare_layer

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(1)
IMG = RNG.standard_normal((3, 6, 6, 3)).astype(np.float32)
SEQ = RNG.standard_normal((3, 7, 4)).astype(np.float32)
VEC = RNG.standard_normal((5, 6)).astype(np.float32)
IDS = RNG.integers(0, 9, (4, 5)).astype(np.float32)
VOL = RNG.standard_normal((2, 3, 4, 4, 3)).astype(np.float32)


def _bn(tf, L, x):
    layer = L.BatchNormalization(momentum=0.7)
    y = layer(x, training=True)
    for update in layer.updates:
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update)
    return y


def _two_branches(tf, L, x):
    a = L.Dense(4, name="left")(x)
    b = L.Dense(4, activation="tanh", name="right")(x)
    return L.Concatenate()([L.Add()([a, b]), L.Multiply()([a, b])])


CASES = {
    "dense": (lambda tf, L, x: L.Dense(5, activation="relu")(x), VEC),
    "dense_regularized": (lambda tf, L, x: L.Dense(3, kernel_initializer="he_normal",
                                                   kernel_regularizer="l2")(x), VEC),
    "activation_softmax": (lambda tf, L, x: L.Activation("softmax")(L.Dense(4)(x)), VEC),
    "reshape": (lambda tf, L, x: L.Dense(2)(L.Reshape((3, 2))(x)), VEC),
    "conv1d": (lambda tf, L, x: L.Conv1D(3, 2, strides=2, padding="same", activation="elu")(x), SEQ),
    "conv2d": (lambda tf, L, x: L.Conv2D(4, 3, padding="same", activation="relu")(x), IMG),
    "conv2d_transpose": (lambda tf, L, x: L.Conv2DTranspose(2, 3, strides=2, padding="same")(x), IMG),
    "max_pooling2d": (lambda tf, L, x: L.MaxPooling2D()(x), IMG),
    "average_pooling2d": (lambda tf, L, x: L.AveragePooling2D(3, strides=2, padding="same")(x), IMG),
    "global_average_pooling2d": (lambda tf, L, x: L.GlobalAveragePooling2D()(x), IMG),
    "flatten_dense": (lambda tf, L, x: L.Dense(3)(L.Flatten()(x)), IMG),
    "batch_normalization_4d": (_bn, IMG),
    "batch_normalization_2d": (_bn, VEC),
    "batch_normalization_5d": (_bn, VOL),
    "layer_normalization": (lambda tf, L, x: L.LayerNormalization()(L.Dense(4)(x)), VEC),
    "embedding": (lambda tf, L, x: L.Embedding(10, 3)(tf.cast(x, tf.int32)), IDS),
    "upsampling2d": (lambda tf, L, x: L.UpSampling2D((2, 3))(x), IMG),
    "time_distributed": (lambda tf, L, x: L.TimeDistributed(L.Dense(3))(x), SEQ),
    "merge": (_two_branches, VEC),
    "dropout_inference": (lambda tf, L, x: L.Dropout(0.5)(x), VEC),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_keras_layer_matches_tensorflow(case):
    build, value = CASES[case]
    compare_layer(build, value, keras=True)
