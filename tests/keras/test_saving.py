"""save_weights/load_weights and save/load_model (HDF5, Keras 2's layout), interchange with
TensorFlow's Keras."""

import h5py
import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_keras

K = tf.keras
RNG = np.random.default_rng(0)
X = RNG.standard_normal((20, 8, 8, 1)).astype(np.float32)
Y = RNG.integers(0, 4, 20)


def _cnn(K):
    return K.Sequential([K.layers.Conv2D(3, 3, activation="relu", input_shape=(8, 8, 1)),
                         K.layers.BatchNormalization(),
                         K.layers.MaxPooling2D(),
                         K.layers.Flatten(),
                         K.layers.Dense(4, activation="softmax")])


def _functional():
    a = K.Input((8, 8, 1), name="image")
    b = K.Input((3,), name="extra")
    h = K.layers.Flatten()(K.layers.Conv2D(2, 3)(a))
    h = K.layers.Concatenate()([h, K.layers.Dense(4, activation="tanh")(b)])
    return K.Model([a, b], K.layers.Dense(2)(K.layers.Dropout(0.3)(h)), name="two_inputs")


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def test_weights_round_trip_hdf5_and_checkpoint(tmp_path):
    with tf.Graph().as_default():
        model = _cnn(K)
        model.compile("adam", "sparse_categorical_crossentropy")
        model.fit(X, Y, epochs=1, verbose=0)
        expected = model.predict(X)
        model.save_weights(str(tmp_path / "w.h5"))
        model.save_weights(str(tmp_path / "ckpt" / "w"))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert [_text(n) for n in f.attrs["layer_names"]] == ["conv2d", "batch_normalization",
                                                                  "max_pooling2d", "flatten", "dense"]
        assert [_text(n) for n in f["batch_normalization"].attrs["weight_names"]] == [
            "batch_normalization/gamma:0", "batch_normalization/beta:0",
            "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    for path in ("w.h5", "ckpt/w"):
        with tf.Graph().as_default():
            model = _cnn(K)
            model.load_weights(str(tmp_path / path))
            np.testing.assert_allclose(model.predict(X), expected, rtol=1e-6)


def test_save_and_load_model(tmp_path):
    with tf.Graph().as_default():
        model = _functional()
        model.compile(K.optimizers.SGD(0.01, momentum=0.5), "mse", metrics=["mae"])
        xb = RNG.standard_normal((20, 3))
        model.fit([X, xb], np.ones((20, 2)), epochs=1, verbose=0)
        expected = model.predict([X, xb])
        model.save(str(tmp_path / "model.h5"))
    with tf.Graph().as_default():
        loaded = K.models.load_model(str(tmp_path / "model.h5"))
        assert loaded.name == "two_inputs" and loaded.input_names == ["image", "extra"]
        np.testing.assert_allclose(loaded.predict([X, xb]), expected, rtol=1e-6)
        assert loaded.optimizer.momentum == 0.5 and loaded.metrics_names == ["loss", "mean_absolute_error"]
        before = loaded.get_weights()
        history = loaded.fit([X, xb], np.ones((20, 2)), epochs=2, verbose=0)
        assert np.isfinite(history.history["loss"]).all()
        assert any(not np.allclose(a, b) for a, b in zip(before, loaded.get_weights()))
    with tf.Graph().as_default():
        seq = _cnn(K)
        seq.save(str(tmp_path / "seq.h5"))
        expected = seq.predict(X)
    with tf.Graph().as_default():
        again = K.models.load_model(str(tmp_path / "seq.h5"))
        assert [type(layer).__name__ for layer in again.layers] == ["Conv2D", "BatchNormalization",
                                                                    "MaxPooling2D", "Flatten", "Dense"]
        np.testing.assert_allclose(again.predict(X), expected, rtol=1e-6)
        again.save_weights(str(tmp_path / "only.h5"))
        with pytest.raises(ValueError, match="weights only"):
            K.models.load_model(str(tmp_path / "only.h5"))


@pytest.mark.oracle
def test_hdf5_weights_interchange_with_tensorflow_keras(tmp_path):
    tf1, tf_keras = require_tf_keras()
    with tf1.Graph().as_default():
        theirs = _cnn(tf_keras)
        theirs.save_weights(str(tmp_path / "tf.h5"))
        expected = theirs.predict(X)
    with tf.Graph().as_default():
        ours = _cnn(K)
        ours.load_weights(str(tmp_path / "tf.h5"))
        np.testing.assert_allclose(ours.predict(X), expected, rtol=1e-5, atol=1e-6)
        ours.compile("sgd", "sparse_categorical_crossentropy")
        ours.fit(X, Y, epochs=1, verbose=0)
        ours.save_weights(str(tmp_path / "fm.h5"))
        trained = ours.predict(X)
    with tf1.Graph().as_default():
        theirs = _cnn(tf_keras)
        theirs.load_weights(str(tmp_path / "fm.h5"))
        np.testing.assert_allclose(theirs.predict(X), trained, rtol=1e-5, atol=1e-6)


def test_load_weights_shape_mismatch_names_the_weight(tmp_path):
    with tf.Graph().as_default():
        K.Sequential([K.layers.Dense(3, input_shape=(4,))]).save_weights(str(tmp_path / "a.h5"))
    with tf.Graph().as_default():
        other = K.Sequential([K.layers.Dense(5, input_shape=(4,))])
        with pytest.raises(ValueError, match=r"dense/kernel:0.*\(4, 5\).*\(4, 3\)"):
            other.load_weights(str(tmp_path / "a.h5"))
