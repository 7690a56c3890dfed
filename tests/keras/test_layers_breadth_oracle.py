"""The layers of issue 26 against tf-keras (graph mode): same weights -> same outputs,
gradients (input and weights), weight names and shapes; same ``get_config`` and a
``from_config`` round trip."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.keras_oracle import compare_config, compare_layer

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)
VEC = RNG.standard_normal((4, 6)).astype(np.float32)
SEQ = RNG.standard_normal((3, 7, 4)).astype(np.float32)
IMG = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
VOL = RNG.standard_normal((2, 4, 5, 4, 2)).astype(np.float32)

CASES = {
    "leaky_relu": (lambda tf, L, x: L.LeakyReLU(0.2)(L.Dense(4)(x)), VEC),
    "relu_capped": (lambda tf, L, x: L.ReLU(max_value=0.5, negative_slope=0.1, threshold=0.2)(x), VEC),
    "relu6": (lambda tf, L, x: L.ReLU(6.0)(x * 4.0), VEC),
    "prelu_shared": (lambda tf, L, x: L.PReLU(alpha_initializer="ones", shared_axes=[1, 2])(x), IMG),
    "prelu": (lambda tf, L, x: L.PReLU()(L.Dense(3)(x)), VEC),
    "elu": (lambda tf, L, x: L.ELU(0.7)(x), VEC),
    "softmax_axes": (lambda tf, L, x: L.Softmax(axis=(1, 2))(x), SEQ),
    "softmax": (lambda tf, L, x: L.Softmax(axis=1)(x), SEQ),
    "thresholded_relu": (lambda tf, L, x: L.ThresholdedReLU(0.4)(x), VEC),
    "zero_padding1d": (lambda tf, L, x: L.ZeroPadding1D((1, 2))(x), SEQ),
    "zero_padding2d": (lambda tf, L, x: L.ZeroPadding2D(((1, 0), (2, 1)))(x), IMG),
    "zero_padding3d": (lambda tf, L, x: L.ZeroPadding3D(1)(x), VOL),
    "cropping1d": (lambda tf, L, x: L.Cropping1D((2, 1))(x), SEQ),
    "cropping2d": (lambda tf, L, x: L.Cropping2D(((1, 0), (2, 1)))(x), IMG),
    "cropping3d": (lambda tf, L, x: L.Cropping3D(((1, 0), (0, 2), (1, 1)))(x), VOL),
    "upsampling1d": (lambda tf, L, x: L.UpSampling1D(3)(x), SEQ),
    "upsampling2d_bilinear": (lambda tf, L, x: L.UpSampling2D(2, interpolation="bilinear")(x), IMG),
    "upsampling3d": (lambda tf, L, x: L.UpSampling3D((1, 2, 2))(x), VOL),
    "repeat_vector": (lambda tf, L, x: L.RepeatVector(3)(x), VEC),
    "permute": (lambda tf, L, x: L.Permute((2, 1))(x), SEQ),
    "conv3d": (lambda tf, L, x: L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), padding="same", activation="relu")(x), VOL),
    "conv2d_grouped": (lambda tf, L, x: L.Conv2D(6, 3, groups=2, padding="same")(L.Dense(4)(x)), IMG),
    "conv2d_grouped_strided": (lambda tf, L, x: L.Conv2D(4, 2, strides=2, groups=4, use_bias=False)(L.Dense(8)(x)), IMG),
    "conv1d_grouped": (lambda tf, L, x: L.Conv1D(4, 2, groups=2)(x), SEQ),
    "conv1d_causal": (lambda tf, L, x: L.Conv1D(2, 3, padding="causal", dilation_rate=2)(x), SEQ),
    "conv1d_transpose": (lambda tf, L, x: L.Conv1DTranspose(3, 3, strides=2, padding="same")(x), SEQ),
    "conv1d_transpose_valid": (lambda tf, L, x: L.Conv1DTranspose(2, 2, strides=3, output_padding=1)(x), SEQ),
    "conv3d_transpose": (lambda tf, L, x: L.Conv3DTranspose(2, 2, strides=(2, 1, 2), padding="same")(x), VOL),
    "depthwise_conv2d": (lambda tf, L, x: L.DepthwiseConv2D(3, depth_multiplier=2, padding="same",
                                                           activation="relu")(x), IMG),
    "depthwise_conv2d_strided": (lambda tf, L, x: L.DepthwiseConv2D((3, 2), strides=2, use_bias=False)(x), IMG),
    "depthwise_conv1d": (lambda tf, L, x: L.DepthwiseConv1D(3, depth_multiplier=2)(x), SEQ),
    "separable_conv2d": (lambda tf, L, x: L.SeparableConv2D(4, 3, padding="same", depth_multiplier=2)(x), IMG),
    "separable_conv2d_dilated": (lambda tf, L, x: L.SeparableConv2D(2, 2, dilation_rate=2)(x), IMG),
    "separable_conv1d": (lambda tf, L, x: L.SeparableConv1D(3, 2, strides=2, activation="tanh")(x), SEQ),
    "max_pooling3d": (lambda tf, L, x: L.MaxPooling3D((2, 2, 2), padding="same")(x), VOL),
    "average_pooling3d": (lambda tf, L, x: L.AveragePooling3D(2, strides=(1, 2, 1))(x), VOL),
    "global_pooling3d": (lambda tf, L, x: L.GlobalAveragePooling3D()(x) + L.GlobalMaxPooling3D()(x), VOL),
    "dot": (lambda tf, L, x: L.Dot(axes=(2, 2))([x, L.Dense(4)(x)]), SEQ),
    "dot_normalize": (lambda tf, L, x: L.dot([x, L.Dense(6)(x)], axes=1, normalize=True), VEC),
    "gaussian_noise_inference": (lambda tf, L, x: L.GaussianNoise(0.5)(x), VEC),
    "gaussian_dropout_inference": (lambda tf, L, x: L.GaussianDropout(0.3)(x), VEC),
    "alpha_dropout_inference": (lambda tf, L, x: L.AlphaDropout(0.3)(x), VEC),
    "spatial_dropout_inference": (lambda tf, L, x: L.SpatialDropout2D(0.5)(x), IMG),
    "attention": (lambda tf, L, x: L.Attention()([x, L.Dense(4)(x)]), SEQ),
    "attention_scaled_causal": (lambda tf, L, x: L.Attention(use_scale=True)([x, x, L.Dense(4)(x)],
                                                                           use_causal_mask=True), SEQ),
    "attention_concat_masked": (lambda tf, L, x: L.Attention(score_mode="concat")(
        [x, x[:, :5]], mask=[None, tf.constant(np.arange(5) < 3)[None] & tf.ones([3, 5], tf.bool)]), SEQ),
    "attention_scores": (lambda tf, L, x: L.Attention()([x, x], return_attention_scores=True)[1], SEQ),
    "additive_attention": (lambda tf, L, x: L.AdditiveAttention()([x, L.Dense(4)(x)]), SEQ),
    "additive_attention_unscaled": (lambda tf, L, x: L.AdditiveAttention(use_scale=False)([x, x]), SEQ),
    "einsum_dense": (lambda tf, L, x: L.EinsumDense("abc,cd->abd", (None, 5), bias_axes="d")(x), SEQ),
    "einsum_dense_elided": (lambda tf, L, x: L.EinsumDense("...b,bc->...c", 3, activation="relu")(x), SEQ),
    "einsum_dense_heads": (lambda tf, L, x: L.EinsumDense("abc,cde->abde", (None, 2, 3), bias_axes="de")(x), SEQ),
    "multi_head_attention": (lambda tf, L, x: L.MultiHeadAttention(2, 3)(x, x), SEQ),
    "multi_head_attention_cross": (lambda tf, L, x: L.MultiHeadAttention(3, 2, value_dim=4, output_shape=5)(
        x, L.Dense(6)(x[:, :5]), L.Dense(4)(x[:, 2:])), SEQ),
    "multi_head_attention_causal": (lambda tf, L, x: L.MultiHeadAttention(2, 2, use_bias=False)(
        x, x, use_causal_mask=True), SEQ),
    "multi_head_attention_mask_scores": (lambda tf, L, x: L.MultiHeadAttention(2, 2)(
        x, x, attention_mask=tf.constant(np.tril(np.ones((7, 7), bool))[None]), return_attention_scores=True)[1],
        SEQ),
    "multi_head_attention_2d": (lambda tf, L, x: L.MultiHeadAttention(2, 2, attention_axes=(1, 2))(x, x), IMG),
    "identity": (lambda tf, L, x: L.Identity()(L.Dense(2)(x)), VEC),
    "unit_normalization": (lambda tf, L, x: L.UnitNormalization(axis=[1, 2])(x), SEQ),
    "group_normalization": (lambda tf, L, x: L.GroupNormalization(groups=2, axis=-1)(L.Conv2D(4, 1)(x)), IMG),
    "group_normalization_instance": (lambda tf, L, x: L.GroupNormalization(groups=-1)(x), SEQ),
    "locally_connected1d": (lambda tf, L, x: L.LocallyConnected1D(2, 3, strides=2, activation="tanh")(x), SEQ),
    "locally_connected2d": (lambda tf, L, x: L.LocallyConnected2D(3, (2, 3), strides=(2, 1))(x), IMG),
    "stacked_rnn_cells": (lambda tf, L, x: L.RNN(L.StackedRNNCells([L.SimpleRNNCell(3), L.SimpleRNNCell(2)]),
                                                 return_sequences=True)(x), SEQ),
    "rnn_cell_list": (lambda tf, L, x: L.RNN([L.LSTMCell(3, recurrent_activation="sigmoid"),
                                             L.GRUCell(2, recurrent_activation="sigmoid", reset_after=True)],
                                            return_state=True)(x)[1][1], SEQ),
    "rnn_custom_cell": (lambda tf, L, x: L.RNN(_minimal_cell(L)(3))(x), SEQ),
}


def _minimal_cell(L):
    """The custom cell of Keras's RNN guide: a Layer with ``state_size`` and ``call``."""

    class MinimalRNNCell(L.Layer):
        def __init__(self, units, **kwargs):
            self.units = units
            self.state_size = units
            super().__init__(**kwargs)

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
            self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                    name="recurrent_kernel")
            self.built = True

        def call(self, inputs, states):
            import flowmesh

            K = flowmesh.keras.backend if isinstance(inputs, flowmesh.Tensor) else _tf_keras_backend()
            output = K.dot(inputs, self.kernel) + K.dot(states[0], self.recurrent_kernel)
            return output, [output]

    return MinimalRNNCell


def _tf_keras_backend():
    from tf_keras import backend

    return backend


@pytest.mark.parametrize("case", sorted(CASES))
def test_layer_matches_tf_keras(case):
    build, value = CASES[case]
    compare_layer(build, value, keras=True)


CONFIGS = {
    "leaky_relu": (lambda L: L.LeakyReLU(0.2), (3,)),
    "relu": (lambda L: L.ReLU(2.0, 0.1, 0.5), (3,)),
    "prelu": (lambda L: L.PReLU(alpha_regularizer="l2", shared_axes=1), (3, 2)),
    "elu": (lambda L: L.ELU(0.5), (3,)),
    "softmax": (lambda L: L.Softmax(axis=1), (3, 2)),
    "thresholded_relu": (lambda L: L.ThresholdedReLU(0.5), (3,)),
    "zero_padding1d": (lambda L: L.ZeroPadding1D((1, 2)), (3, 2)),
    "zero_padding2d": (lambda L: L.ZeroPadding2D(2), (3, 3, 1)),
    "zero_padding3d": (lambda L: L.ZeroPadding3D(((1, 0), (0, 1), (2, 2))), (2, 2, 2, 1)),
    "cropping1d": (lambda L: L.Cropping1D(1), (5, 2)),
    "cropping2d": (lambda L: L.Cropping2D((1, 2)), (5, 5, 1)),
    "cropping3d": (lambda L: L.Cropping3D(), (4, 4, 4, 1)),
    "upsampling1d": (lambda L: L.UpSampling1D(3), (3, 2)),
    "upsampling2d": (lambda L: L.UpSampling2D(3, interpolation="bilinear"), (3, 3, 1)),
    "upsampling3d": (lambda L: L.UpSampling3D(2), (2, 2, 2, 1)),
    "repeat_vector": (lambda L: L.RepeatVector(4), (3,)),
    "permute": (lambda L: L.Permute((2, 3, 1)), (2, 3, 4)),
    "conv3d": (lambda L: L.Conv3D(2, 2, kernel_constraint="max_norm"), (3, 3, 3, 1)),
    "conv1d_transpose": (lambda L: L.Conv1DTranspose(2, 3, strides=2, output_padding=1), (5, 2)),
    "conv3d_transpose": (lambda L: L.Conv3DTranspose(2, 2, padding="same"), (3, 3, 3, 1)),
    "depthwise_conv2d": (lambda L: L.DepthwiseConv2D(3, depth_multiplier=2, depthwise_regularizer="l1"), (5, 5, 2)),
    "depthwise_conv1d": (lambda L: L.DepthwiseConv1D(2), (5, 2)),
    "separable_conv2d": (lambda L: L.SeparableConv2D(3, 2, pointwise_initializer="ones"), (5, 5, 2)),
    "separable_conv1d": (lambda L: L.SeparableConv1D(3, 2, padding="causal"), (5, 2)),
    "max_pooling3d": (lambda L: L.MaxPooling3D(2), (4, 4, 4, 1)),
    "average_pooling3d": (lambda L: L.AveragePooling3D(2, padding="same"), (4, 4, 4, 1)),
    "global_average_pooling3d": (lambda L: L.GlobalAveragePooling3D(keepdims=True), (4, 4, 4, 1)),
    "dot": (lambda L: L.Dot(axes=-1, normalize=True), [(3,), (3,)]),
    "gaussian_noise": (lambda L: L.GaussianNoise(0.1, seed=3), (3,)),
    "gaussian_dropout": (lambda L: L.GaussianDropout(0.1), (3,)),
    "alpha_dropout": (lambda L: L.AlphaDropout(0.1, seed=1), (3,)),
    "spatial_dropout1d": (lambda L: L.SpatialDropout1D(0.2), (3, 2)),
    "spatial_dropout3d": (lambda L: L.SpatialDropout3D(0.2, data_format="channels_first"), (1, 2, 2, 2)),
    "activity_regularization": (lambda L: L.ActivityRegularization(0.1, 0.2), (3,)),
    "attention": (lambda L: L.Attention(use_scale=True, score_mode="concat", dropout=0.1), [(4, 3), (5, 3)]),
    "additive_attention": (lambda L: L.AdditiveAttention(use_scale=False), [(4, 3), (5, 3)]),
    "einsum_dense": (lambda L: L.EinsumDense("abc,cd->abd", (None, 5), bias_axes="d", activation="relu"), (4, 3)),
    "identity": (lambda L: L.Identity(), (3,)),
    "unit_normalization": (lambda L: L.UnitNormalization(axis=[1, 2]), (3, 2)),
    "group_normalization": (lambda L: L.GroupNormalization(2, epsilon=0.1, gamma_constraint="non_neg"), (3, 4)),
    "locally_connected2d": (lambda L: L.LocallyConnected2D(2, 2, activation="relu"), (3, 3, 1)),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_config_matches_tf_keras(case):
    make, shape = CONFIGS[case]
    compare_config(make, shape)


def test_rnn_with_stacked_cells_config_matches_tf_keras():
    """The RNN's own settings and the cells' classes and names (flowmesh's SimpleRNNCell
    config leaves out tf-keras's regularizer/constraint keys)."""
    config = compare_config(lambda L: L.RNN(L.StackedRNNCells([L.SimpleRNNCell(2), L.SimpleRNNCell(3)])), (4, 2),
                            ignore=("groups", "cell"))
    assert "return_state" in config
    import flowmesh

    with flowmesh.Graph().as_default():
        layer = flowmesh.keras.layers.RNN([flowmesh.keras.layers.SimpleRNNCell(2)])
        again = type(layer).from_config(layer.get_config())
        assert [type(c).__name__ for c in again.cell.cells] == ["SimpleRNNCell"]


def test_multi_head_attention_config_matches_tf_keras():
    """Called on (query, value): the config records the shapes, from_config rebuilds the
    projections (unbuilt) from them."""
    import flowmesh
    from flowmesh.testing.keras_oracle import _plain, require_tf_keras

    tf1, tf_keras = require_tf_keras()
    configs = []
    for lib, layers in ((tf1, tf_keras.layers), (flowmesh, flowmesh.keras.layers)):
        with lib.Graph().as_default():
            layer = layers.MultiHeadAttention(2, 3, dropout=0.1, kernel_regularizer="l2", attention_axes=1)
            layer(lib.placeholder(lib.float32, [None, 4, 6]), lib.placeholder(lib.float32, [None, 5, 6]))
            configs.append(_plain(layer.get_config()))
    assert configs[1] == configs[0]
    with flowmesh.Graph().as_default():
        again = flowmesh.keras.layers.MultiHeadAttention.from_config(configs[1])
        assert _plain(again.get_config()) == configs[1] and again._query_dense.name == "query"
