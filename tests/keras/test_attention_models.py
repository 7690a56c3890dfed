"""Attention layers inside functional models: a transformer block (MultiHeadAttention,
LayerNormalization, residuals) trains, saves to HDF5 and to TensorFlow-format checkpoints,
and both interchange with tf-keras; a cross-attention model records both inputs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
RNG = np.random.default_rng(4)
X = RNG.standard_normal((6, 5, 8)).astype(np.float32)


def _transformer(keras):
    inputs = keras.Input((5, 8))
    attended = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
    h = keras.layers.LayerNormalization(epsilon=1e-6)(keras.layers.Add()([inputs, attended]))
    ff = keras.layers.Dense(8)(keras.layers.Dense(16, activation="relu")(h))
    h = keras.layers.LayerNormalization(epsilon=1e-6)(keras.layers.Add()([h, ff]))
    return keras.Model(inputs, keras.layers.Dense(2)(keras.layers.GlobalAveragePooling1D()(h)))


def _cross(keras):
    query, context = keras.Input((5, 8)), keras.Input((3, 4))
    key = keras.layers.Dense(4, name="key_proj")(context)
    out = keras.layers.MultiHeadAttention(2, 3, name="cross")(query, context, key)
    return keras.Model([query, context], keras.layers.Flatten()(out))


def test_transformer_block_learns():
    x = np.random.default_rng(0).standard_normal((64, 5, 8)).astype(np.float32)
    y = (x[:, :, 0].mean(axis=1) > 0).astype(np.int64)
    rng = np.random.default_rng(1)
    with tf.Graph().as_default():
        model = _transformer(K)
        model.set_weights([rng.uniform(-0.3, 0.3, w.shape).astype(np.float32) if w.ndim > 1 else w
                           for w in model.get_weights()])
        model.compile(K.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(x, y, epochs=40, batch_size=32, shuffle=False, verbose=0).history
        assert history["loss"][-1] < 0.5 * history["loss"][0] and history["acc"][-1] > 0.8


def test_cross_attention_records_every_input(tmp_path):
    context = RNG.standard_normal((6, 3, 4)).astype(np.float32)
    with tf.Graph().as_default():
        model = _cross(K)
        assert [layer.name for layer in model.layers][-3:] == ["key_proj", "cross", "flatten"]
        expected = model.predict([X, context])
        model.save(str(tmp_path / "cross.h5"))
        inbound = model.get_config()["layers"][3]["inbound_nodes"][0]
        assert inbound[0][:3] == ["input_1", 0, 0] and inbound[0][3] == {"value": ["input_2", 0, 0],
                                                                           "key": ["key_proj", 0, 0]}
    with tf.Graph().as_default():
        loaded = K.models.load_model(str(tmp_path / "cross.h5"))
        np.testing.assert_allclose(loaded.predict([X, context]), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("make", [_transformer, _cross])
def test_attention_models_interchange_with_tf_keras(make, tmp_path):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    x = [X, RNG.standard_normal((6, 3, 4)).astype(np.float32)] if make is _cross else X
    with tf.Graph().as_default():
        ours = make(K)
        ours.set_weights([RNG.standard_normal(w.shape).astype(np.float32) * 0.3 for w in ours.get_weights()])
        expected = ours.predict(x)
        ours.save(str(tmp_path / "ours.h5"))
        ours.save_weights(str(tmp_path / "ours" / "ckpt"))
    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        theirs = tf_keras.models.load_model(str(tmp_path / "ours.h5"))
        np.testing.assert_allclose(theirs.predict(x), expected, rtol=1e-4, atol=1e-5)
        rebuilt = make(tf_keras)
        rebuilt.load_weights(str(tmp_path / "ours" / "ckpt"))
        np.testing.assert_allclose(rebuilt.predict(x), expected, rtol=1e-4, atol=1e-5)
        theirs.save(str(tmp_path / "theirs.h5"))
    with tf.Graph().as_default():
        back = K.models.load_model(str(tmp_path / "theirs.h5"))
        np.testing.assert_allclose(back.predict(x), expected, rtol=1e-4, atol=1e-5)
