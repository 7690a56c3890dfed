"""TensorFlow-format ``save_weights``/``load_weights`` (tf-keras's object-graph checkpoint):
matched by the model's structure, so a second model in the same graph loads it, and files
interchange with tf-keras both ways."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
RNG = np.random.default_rng(3)
IMG = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
IDS = RNG.integers(1, 9, (2, 5)).astype(np.int32)


def _cnn(keras):
    inputs = keras.Input((6, 6, 3))
    h = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Flatten()(keras.layers.MaxPooling2D()(h))
    return keras.Model(inputs, keras.layers.Dense(2)(h))


def _lstm(keras):
    return keras.Sequential([keras.layers.Embedding(9, 3, input_length=5), keras.layers.LSTM(4, recurrent_activation="sigmoid"),
                             keras.layers.Dense(2)])


def _bidirectional(keras):
    return keras.Sequential([keras.layers.Embedding(9, 3, input_length=5),
                             keras.layers.Bidirectional(keras.layers.GRU(2, reset_after=True, recurrent_activation="sigmoid")), keras.layers.Dense(1)])


MODELS = {"cnn": (_cnn, IMG), "lstm": (_lstm, IDS), "bidirectional": (_bidirectional, IDS)}


def _randomize(model):
    model.set_weights([RNG.standard_normal(w.shape).astype(np.float32) * 0.5 + (1.0 if "variance" in n else 0.0)
                       for w, n in zip(model.get_weights(), [w.name for w in model.weights])])


def test_a_second_model_in_the_same_graph_loads_by_structure(tmp_path):
    with tf.Graph().as_default():
        first, second = _cnn(K), _cnn(K)
        assert first.weights[0].name != second.weights[0].name  # conv2d/kernel:0, conv2d_1/kernel:0
        _randomize(first)
        first.save_weights(str(tmp_path / "ckpt"))
        second.load_weights(str(tmp_path / "ckpt"))
        np.testing.assert_array_equal(second.predict(IMG), first.predict(IMG))
        assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt")
        keys = dict(tf.train.list_variables(str(tmp_path / "ckpt")))
        assert keys["layer_with_weights-1/moving_mean/.ATTRIBUTES/VARIABLE_VALUE"] == [4]


def test_load_errors_name_the_problem(tmp_path):
    with tf.Graph().as_default():
        model = _cnn(K)
        model.save_weights(str(tmp_path / "ckpt"))
        with pytest.raises(ValueError, match="No weight of model .* matches the checkpoint"):
            K.Sequential([K.layers.Embedding(9, 3, input_length=5)]).load_weights(str(tmp_path / "ckpt"))
        inputs = K.Input((6, 6, 3))
        wide = K.Model(inputs, K.layers.Dense(2)(K.layers.Flatten()(K.layers.Conv2D(5, 3)(inputs))))
        with pytest.raises(ValueError, match=r"Shape mismatch .* \(3, 3, 3, 5\).* \(3, 3, 3, 4\)"):
            wide.load_weights(str(tmp_path / "ckpt"))


def test_a_name_based_checkpoint_still_loads(tmp_path):
    with tf.Graph().as_default():
        model = _cnn(K)
        _randomize(model)
        tf.train.Saver(model.weights).save(K.backend.get_session(), str(tmp_path / "old"))
        expected = model.predict(IMG)
        model.set_weights([np.zeros_like(w) for w in model.get_weights()])
        model.load_weights(str(tmp_path / "old"))
        np.testing.assert_array_equal(model.predict(IMG), expected)


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(MODELS))
def test_checkpoints_interchange_with_tf_keras(case, tmp_path):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    make, x = MODELS[case]
    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        theirs = make(tf_keras)
        _randomize(theirs)
        theirs.save_weights(str(tmp_path / "theirs" / "ckpt"))
        their_out = theirs.predict(x)
        back = make(tf_keras)
    with tf.Graph().as_default():
        ours = make(K)
        ours.load_weights(str(tmp_path / "theirs" / "ckpt"))
        np.testing.assert_allclose(ours.predict(x), their_out, rtol=1e-5, atol=1e-6)
        _randomize(ours)
        ours.save_weights(str(tmp_path / "ours" / "ckpt"))
        our_out = ours.predict(x)
    with graph.as_default():
        back.load_weights(str(tmp_path / "ours" / "ckpt"))
        np.testing.assert_allclose(back.predict(x), our_out, rtol=1e-5, atol=1e-6)


def test_subclassed_models_match_by_attribute_names(tmp_path):
    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.hidden = K.layers.Dense(3, activation="tanh")
            self.out = K.layers.Dense(1)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    x = RNG.standard_normal((4, 2)).astype(np.float32)
    with tf.Graph().as_default():
        first, second = Net(), Net()
        first.predict(x), second.predict(x)
        _randomize(first)
        first.save_weights(str(tmp_path / "net"))
        keys = [k for k, _ in tf.train.list_variables(str(tmp_path / "net"))]
        assert "hidden/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys and "out/bias/.ATTRIBUTES/VARIABLE_VALUE" in keys
        second.load_weights(str(tmp_path / "net"))
        np.testing.assert_array_equal(second.predict(x), first.predict(x))
