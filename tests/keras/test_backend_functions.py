"""``tf.keras.backend`` (``K.*``) functions against tf-keras's own, in graph mode: the same
values, and the same gradients of a weighted sum of each output with respect to the
floating-point inputs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import _densify

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 3, 4)).astype(np.float32)
B = RNG.standard_normal((2, 4, 3)).astype(np.float32)
M = RNG.standard_normal((3, 4)).astype(np.float32)
V = RNG.standard_normal((2, 5)).astype(np.float32)
P = np.abs(RNG.standard_normal((2, 5))).astype(np.float32)
IMG = RNG.standard_normal((2, 5, 5, 3)).astype(np.float32)
VOL = RNG.standard_normal((1, 4, 4, 4, 2)).astype(np.float32)
K2 = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
ONE_HOT = np.eye(5, dtype=np.float32)[[1, 3]]

CASES = {
    "sum": (lambda K, a: K.sum(a, axis=1, keepdims=True), [A]),
    "mean_bool": (lambda K, a: K.mean(K.greater(a, 0.0)), [A]),
    "std_var": (lambda K, a: K.std(a, axis=-1) + K.var(a, axis=-1, keepdims=False), [A]),
    "max_min_prod": (lambda K, a: K.max(a, 1) + K.min(a, 1) + K.prod(a, -1)[:, :1], [A]),
    "any_all": (lambda K, a: K.cast(K.any(a > 1.0, 1), "float32") + K.cast(K.all(a > -2.0, 1), "float32"), [A]),
    "argmax_cumsum": (lambda K, a: K.cast(K.argmax(a), "float32")[..., None] + K.cumsum(a, 1)[:, :, 0:1], [A]),
    "cumprod": (lambda K, a: K.cumprod(a, axis=2), [A]),
    "elementwise": (lambda K, a: K.abs(a) + K.square(a) + K.sqrt(a) + K.exp(-K.abs(a)) + K.sign(a)
                    + K.sin(a) * K.cos(a) + K.pow(K.abs(a), 1.5) + K.round(a * 3.0), [A]),
    "clip": (lambda K, a: K.clip(a, -0.5, 0.5) + K.clip(a, 1.0, 0.0), [A]),
    "compare": (lambda K, a: K.cast(K.equal(a, a) & K.not_equal(a, 0.0) & K.less_equal(a, 1.0), "float32")
                + K.maximum(a, 0.1) - K.minimum(a, -0.1), [A]),
    "dot_matrix": (lambda K, m: K.dot(m, K.transpose(m)), [M]),
    "dot_nd": (lambda K, a, b: K.dot(a, b), [A, B]),
    "batch_dot_3d": (lambda K, a, b: K.batch_dot(a, b, axes=(2, 1)), [A, B]),
    "batch_dot_default": (lambda K, a, b: K.batch_dot(a, b), [A, B]),
    "batch_dot_vectors": (lambda K, v, p: K.batch_dot(v, p, axes=1), [V, P]),
    "batch_dot_mixed": (lambda K, a, v: K.batch_dot(a, v[:, :4], axes=(2, 1)), [A, V]),
    "shapes": (lambda K, a: K.permute_dimensions(K.reshape(a, (2, 12, 1)), (0, 2, 1))
               + K.expand_dims(K.batch_flatten(a), 1), [A]),
    "squeeze_stack_concat": (lambda K, a: K.concatenate([K.stack([a[:, 0], a[:, 1]], 1), a[:, :1]], axis=-2)
                             + K.squeeze(K.expand_dims(a, 1), 1)[:, :3], [A]),
    "flatten_tile_reverse": (lambda K, a: K.flatten(K.tile(K.reverse(a, 1), (1, 2, 1))), [A]),
    "repeat": (lambda K, v: K.repeat(v, 3), [V]),
    "repeat_elements": (lambda K, a: K.repeat_elements(a, 2, axis=1), [A]),
    "gather_one_hot": (lambda K, m: K.gather(m, [2, 0]) + K.one_hot(K.constant([1, 3], "int32"), 4), [M]),
    "arange": (lambda K: K.concatenate([K.cast(K.arange(2, 9, 3), "float32"), K.cast(K.arange(-2), "float32"),
                                        K.arange(1.0, 2.0, 0.5, dtype="float32")]), []),
    "relu_variants": (lambda K, a: K.relu(a) + K.relu(a, alpha=0.2) + K.relu(a, max_value=0.5)
                      + K.relu(a, alpha=0.1, threshold=0.3) + K.relu(a, max_value=6), [A]),
    "activations": (lambda K, a: K.elu(a) + K.elu(a, 0.5) + K.softplus(a) + K.softsign(a) + K.sigmoid(a)
                    + K.hard_sigmoid(a) + K.tanh(a) + K.softmax(a, axis=1), [A]),
    "l2_normalize": (lambda K, a: K.l2_normalize(a, axis=-1), [A]),
    "categorical_xent": (lambda K, p: K.categorical_crossentropy(K.constant(ONE_HOT), p)
                         + K.categorical_crossentropy(K.constant(ONE_HOT), p, from_logits=True), [P]),
    "categorical_xent_softmax": (lambda K, v: K.categorical_crossentropy(K.constant(ONE_HOT), K.softmax(v)), [V]),
    "binary_xent": (lambda K, v: K.binary_crossentropy(K.constant(ONE_HOT), K.sigmoid(v))
                    + K.binary_crossentropy(K.constant(ONE_HOT), v, from_logits=True)
                    + K.binary_crossentropy(K.constant(ONE_HOT), K.clip(K.abs(v), 0.0, 1.0)), [V]),
    "sparse_xent": (lambda K, v: K.sparse_categorical_crossentropy(K.constant([1, 3]), K.softmax(v)), [V]),
    "focal": (lambda K, v: K.binary_focal_crossentropy(K.constant(ONE_HOT), K.sigmoid(v), gamma=2.0)
              + K.binary_focal_crossentropy(K.constant(ONE_HOT), v, apply_class_balancing=True, from_logits=True)
              + K.expand_dims(K.categorical_focal_crossentropy(K.constant(ONE_HOT), K.softmax(v)), 1), [V]),
    "batch_normalization": (lambda K, v, p: K.batch_normalization(v, K.mean(v, 0), K.var(v, 0), p[0], p[1]),
                            [V, P]),
    "normalize_batch_in_training": (lambda K, a: K.normalize_batch_in_training(
        a, K.constant(np.arange(1, 5, dtype=np.float32)), None, [0, 1])[0], [A]),
    "bias_add": (lambda K, a, m: K.bias_add(a, m[0]) + K.bias_add(a, m) + K.permute_dimensions(K.bias_add(
                     K.permute_dimensions(a, (0, 2, 1)), m[0], data_format="channels_first"), (0, 2, 1)),
                 [A, M]),
    "conv1d_causal": (lambda K, a, m: K.conv1d(a, K.reshape(m, (3, 4, 1)), padding="causal", dilation_rate=2),
                      [A, M]),
    "conv2d": (lambda K, x, k: K.conv2d(x, k, strides=(2, 1), padding="same"), [IMG, K2]),
    "conv2d_transpose": (lambda K, x, k: K.conv2d_transpose(x[:, :, :, :2], k[:, :, :2, :2], (None, 10, 10, 2),
                                                            strides=(2, 2), padding="same"), [IMG, K2]),
    "depthwise_separable": (lambda K, x, k: K.depthwise_conv2d(x, k[:, :, :, :1]) + K.separable_conv2d(
        x, k[:, :, :, :1], K.reshape(k[0, 0, :, :1], (1, 1, 3, 1))), [IMG, K2]),
    "conv3d": (lambda K, x: K.conv3d(x, K.ones((2, 2, 2, 2, 1)) * 0.5), [VOL]),
    "pool": (lambda K, x: K.pool2d(x, (2, 2), (2, 2), padding="same") + K.pool2d(x, (3, 3), (2, 2), "same",
                                                                                 pool_mode="avg"), [IMG]),
    "pool3d": (lambda K, x: K.pool3d(x, (2, 2, 2), (2, 2, 2)) + K.pool3d(x, (2, 2, 2), (2, 2, 2), pool_mode="avg"),
               [VOL]),
    "padding": (lambda K, a, x: K.sum(K.temporal_padding(a, (1, 2))) + K.sum(K.spatial_2d_padding(x))
                + K.sum(K.spatial_3d_padding(x[:, None])), [A, IMG]),
    "resize": (lambda K, x: K.resize_images(x, 2, 3, "channels_last"), [IMG]),
    "resize_bilinear": (lambda K, x: K.resize_images(x, 2, 2, "channels_last", interpolation="bilinear"), [IMG]),
    "resize_volumes": (lambda K, x: K.resize_volumes(x, 1, 2, 2, "channels_last"), [VOL]),
    "local_conv1d": (lambda K, a, m: K.local_conv1d(a, K.reshape(m, (1, 12, 1)), (3,), (1,)),
                     [A, M]),
    "local_conv2d": (lambda K, x: K.local_conv2d(x[:, :3, :3, :1], K.ones((4, 4, 2)), (2, 2), (1, 1), (2, 2)),
                     [IMG]),
    "switch": (lambda K, a: K.switch(a > 0, a, -a) + K.switch(K.constant(True), lambda: a, lambda: 2 * a), [A]),
    "in_train_phase": (lambda K, a: K.in_train_phase(a, -a) + K.in_test_phase(a, 3 * a, training=1), [A]),
    "ctc_label_dense_to_sparse": (lambda K: K.cast(tf_or_tf1_to_dense(K, K.ctc_label_dense_to_sparse(
        K.constant([[1, 2, 0], [3, 0, 0]], "int32"), K.constant([2, 1], "int32"))), "float32"), []),
}


def _rnn(K, a, m, **kwargs):
    def step(x_t, states):
        h = K.tanh(K.dot(x_t, K.transpose(m)) + states[0] * states[1])
        return h, [h]

    h0 = K.zeros_like(a[:, 0, :3])
    last, outputs, states = K.rnn(step, a, [h0], constants=[K.constant(0.5)], **kwargs)
    return K.concatenate([last[:, None], outputs, states[0][:, None]], axis=1)


MASK = np.array([[1, 1, 0], [1, 0, 1]], bool)
CASES.update({
    "rnn": (lambda K, a, m: _rnn(K, a, m), [A, M]),
    "rnn_backwards_last": (lambda K, a, m: _rnn(K, a, m, go_backwards=True, return_all_outputs=False), [A, M]),
    "rnn_masked": (lambda K, a, m: _rnn(K, a, m, mask=K.constant(MASK, "bool")), [A, M]),
    "rnn_masked_zeros": (lambda K, a, m: _rnn(K, a, m, mask=K.constant(MASK, "bool"), zero_output_for_mask=True),
                         [A, M]),
})


def tf_or_tf1_to_dense(K, sparse):
    return K.to_dense(sparse)


def _run(lib, K, fn, inputs):
    graph = lib.Graph()
    with graph.as_default():
        xs = [lib.constant(x) for x in inputs]
        out = fn(K, *xs)
        wrt = [x for x in xs if x.dtype == lib.float32]
        cot = lib.constant(np.random.default_rng(0).standard_normal(out.shape.as_list()).astype(np.float32))
        grads = lib.gradients(lib.reduce_sum(out * cot), wrt) if wrt and out.dtype == lib.float32 else []
        with lib.Session(graph=graph) as sess:
            sess.run(lib.global_variables_initializer())
            out, grads = sess.run([out, [g for g in grads if g is not None]])
    return out, [_densify(g) for g in grads]


@pytest.mark.parametrize("case", sorted(CASES))
def test_backend_function_matches_tf_keras(case):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    fn, inputs = CASES[case]
    theirs, their_grads = _run(tf1, tf_keras.backend, fn, inputs)
    ours, our_grads = _run(tf, tf.keras.backend, fn, inputs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    assert len(our_grads) == len(their_grads)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_backend_state_functions():
    K = tf.keras.backend
    with tf.Graph().as_default():
        assert K.backend() == "tensorflow" and (K.get_uid("x"), K.get_uid("x"), K.get_uid("y")) == (1, 2, 1)
        v = K.variable(np.ones((2, 3)))
        assert K.ndim(v) == 2 and K.dtype(v) == "float32" and K.count_params(v) == 6
        x = tf.keras.Input((3,))
        assert K.is_keras_tensor(x) and not K.is_keras_tensor(tf.constant([1.0]))
        with pytest.raises(ValueError, match="Expected a symbolic tensor"):
            K.is_keras_tensor(np.ones(3))
        with K.learning_phase_scope(1):
            assert K.get_value(K.in_train_phase(tf.constant(1.0), tf.constant(2.0))) == 1.0
        assert K.get_value(K.in_train_phase(tf.constant(1.0), tf.constant(2.0))) == 2.0
        K.get_value(K.update_add(v, np.ones((2, 3))))
        K.get_value(K.moving_average_update(v, K.zeros((2, 3)), 0.75))
        np.testing.assert_allclose(K.get_value(v), 1.5)
        assert K.cast_to_floatx([1, 2]).dtype == np.float32 and K.random_bernoulli((3,), 1.0).shape == (3,)
        assert K.get_value(K.random_uniform_variable((2,), 0.0, 1.0, seed=1)).shape == (2,)
        with pytest.raises(ValueError, match="Unknown data_format"):
            K.set_image_data_format("nhwc")
