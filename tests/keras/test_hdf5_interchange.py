"""Whole-model HDF5 files (``model.save`` / ``load_model``) moving between flowmesh and
TensorFlow's Keras 2 (tf-keras, graph mode) both ways: architecture, weights, compile
settings and optimizer state. Oracle: the loaded model predicts what the saving model
predicted, and one more epoch of training from the file gives the weights the saving
model reached when it trained that epoch itself (so the optimizer state was carried)."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_keras

K = tf.keras
RNG = np.random.default_rng(0)
IMAGES = RNG.standard_normal((24, 9, 9, 1)).astype(np.float32)
IDS = RNG.integers(0, 12, (24, 6)).astype(np.int32)
EXTRA = RNG.standard_normal((24, 2)).astype(np.float32)
FEATURES = RNG.standard_normal((24, 7)).astype(np.float32)
SEQUENCES = RNG.standard_normal((24, 10, 3)).astype(np.float32)
LABELS = RNG.integers(0, 3, 24)


def _cnn(K):
    return K.Sequential([K.layers.Conv2D(4, 3, activation="relu", input_shape=(9, 9, 1)),
                         K.layers.BatchNormalization(),
                         K.layers.MaxPooling2D(),
                         K.layers.AveragePooling2D(pool_size=(1, 2)),
                         K.layers.Flatten(),
                         K.layers.Dense(3, activation="softmax")])


def _recurrent(K):
    ids = K.Input((6,), name="ids", dtype="int32")
    extra = K.Input((2,), name="extra")
    h = K.layers.LSTM(5)(K.layers.Embedding(12, 4)(ids))
    h = K.layers.Concatenate()([h, K.layers.Dense(3, activation="tanh")(extra)])
    return K.Model([ids, extra], K.layers.Dense(3, activation="softmax")(h), name="two_inputs")


def _mlp(K):  # Dropout: predictions compared, training is random
    return K.Sequential([K.layers.Dense(8, activation="relu", input_shape=(7,)), K.layers.Dropout(0.3),
                         K.layers.Dense(3, activation="softmax")])


def _sequence(K):
    return K.Sequential([K.layers.Conv1D(4, 3, activation="relu", input_shape=(10, 3)),
                         K.layers.MaxPooling1D(),
                         K.layers.Bidirectional(K.layers.GRU(3, return_sequences=True)),
                         K.layers.TimeDistributed(K.layers.Dense(2)),
                         K.layers.SimpleRNN(4),
                         K.layers.Dense(3, activation="softmax")])


def _optimizer(K, kind):
    legacy = getattr(K.optimizers, "legacy", K.optimizers)  # tf-keras's graph mode needs these
    if kind == "adam":
        return legacy.Adam(0.01)
    if kind == "sgd":
        return legacy.SGD(0.1, momentum=0.9, nesterov=True)
    if kind == "adagrad":
        return legacy.Adagrad(0.05)
    return legacy.RMSprop(0.01, momentum=0.5)


CASES = {"cnn": (_cnn, "adam", [IMAGES]), "recurrent": (_recurrent, "sgd", [IDS, EXTRA]),
         "mlp": (_mlp, "rmsprop", [FEATURES]), "sequence": (_sequence, "adagrad", [SEQUENCES])}


def _train_save_continue(K, case, path):
    """Builds, trains 2 epochs, saves to ``path``; returns the predictions then, and the
    weights after one more epoch (None for a model with Dropout)."""
    build, kind, xs = CASES[case]
    model = build(K)
    model.compile(_optimizer(K, kind), "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(xs, LABELS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    model.save(path)
    predicted = model.predict(xs)
    if case == "mlp":
        return predicted, None
    model.fit(xs, LABELS, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return predicted, _named_weights(model)


def _load_and_continue(K, case, path):
    _, _, xs = CASES[case]
    model = K.models.load_model(path)
    predicted = model.predict(xs)
    if case == "mlp":
        return model, predicted, None
    model.fit(xs, LABELS, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return model, predicted, _named_weights(model)


def _named_weights(model):
    """Weight values by variable name (tf-keras orders get_weights() differently)."""
    return dict(zip([w.name for w in model.weights], model.get_weights()))


@pytest.fixture(autouse=True)
def _tf_while_gradients():
    """tf-keras builds the LSTM's training gradient after the forward While loop ran."""
    tf1, _ = require_tf_keras()
    tf1.experimental.output_all_intermediates(True)
    yield
    tf1.experimental.output_all_intermediates(None)


def _compare(predicted, expected_predicted, weights, expected_weights):
    np.testing.assert_allclose(predicted, expected_predicted, rtol=1e-4, atol=1e-5)
    if expected_weights is not None:
        assert sorted(weights) == sorted(expected_weights)
        for name, value in expected_weights.items():
            np.testing.assert_allclose(weights[name], value, rtol=1e-3, atol=2e-4, err_msg=name)


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_tf_keras_file_loads_in_flowmesh(tmp_path, case):
    tf1, tf_keras = require_tf_keras()
    path = str(tmp_path / "tf.h5")
    with tf1.Graph().as_default():
        expected_predicted, expected_weights = _train_save_continue(tf_keras, case, path)
    with tf.Graph().as_default():
        model, predicted, weights = _load_and_continue(K, case, path)
        assert type(model).__name__ == ("Model" if case == "recurrent" else "Sequential")
        assert model.metrics_names == ["loss", "acc"]
        if expected_weights is not None:  # 3 steps per epoch: 6 in the file, 3 more here
            assert int(K.backend.get_value(model.optimizer.iterations)) == 9
    _compare(predicted, expected_predicted, weights, expected_weights)


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_flowmesh_file_loads_in_tf_keras(tmp_path, case):
    tf1, tf_keras = require_tf_keras()
    path = str(tmp_path / "fm.h5")
    with tf.Graph().as_default():
        expected_predicted, expected_weights = _train_save_continue(K, case, path)
    with tf1.Graph().as_default():
        model, predicted, weights = _load_and_continue(tf_keras, case, path)
        assert model.name == ("two_inputs" if case == "recurrent" else model.name)
        assert type(model.optimizer).__name__ == {"cnn": "Adam", "recurrent": "SGD", "mlp": "RMSprop",
                                                  "sequence": "Adagrad"}[case]
    _compare(predicted, expected_predicted, weights, expected_weights)


def _datasets(path):
    with h5py.File(path, "r") as f:
        out = {}
        f.visititems(lambda name, obj: out.__setitem__(name, np.asarray(obj)) if isinstance(obj, h5py.Dataset)
                     else None)
        names = [n.decode() if isinstance(n, bytes) else n for n in f["optimizer_weights"].attrs["weight_names"]]
    return out, names


@pytest.mark.oracle
def test_round_trip_keeps_every_weight_and_the_optimizer_layout(tmp_path):
    """tf-keras file -> flowmesh load -> flowmesh save: the same datasets at the same paths
    (weights and optimizer state in tf-keras's order), before and after training."""
    tf1, tf_keras = require_tf_keras()
    with tf1.Graph().as_default():
        _train_save_continue(tf_keras, "cnn", str(tmp_path / "tf.h5"))
    with tf.Graph().as_default():
        model = K.models.load_model(str(tmp_path / "tf.h5"))
        model.save(str(tmp_path / "again.h5"))
        model.fit(IMAGES, LABELS, batch_size=8, epochs=1, shuffle=False, verbose=0)
        model.save(str(tmp_path / "trained.h5"))
    theirs, their_names = _datasets(tmp_path / "tf.h5")
    again, again_names = _datasets(tmp_path / "again.h5")
    trained, trained_names = _datasets(tmp_path / "trained.h5")
    assert again_names == their_names == trained_names
    assert their_names[:3] == ["training/Adam/iter:0", "training/Adam/conv2d/kernel/m:0",
                               "training/Adam/conv2d/bias/m:0"]
    assert sorted(again) == sorted(theirs) == sorted(trained)
    for name, value in theirs.items():
        np.testing.assert_array_equal(again[name], value, err_msg=name)
    assert int(trained["optimizer_weights/training/Adam/iter:0"]) == 9


class Scale(K.layers.Layer):
    """A user layer: multiplies by a constant factor."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def test_custom_layers_need_custom_objects(tmp_path):
    path = str(tmp_path / "custom.h5")
    with tf.Graph().as_default():
        x = K.Input((3,))
        model = K.Model(x, Scale(3.0, name="scale")(K.layers.Dense(2)(x)))
        model.save(path)
        expected = model.predict(FEATURES[:, :3])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Unknown layer: 'Scale' \(layer 'scale'\).*custom_objects"):
            K.models.load_model(path)
    with tf.Graph().as_default():
        loaded = K.models.load_model(path, custom_objects={"Scale": Scale})
        assert loaded.layers[-1].factor == 3.0
        np.testing.assert_allclose(loaded.predict(FEATURES[:, :3]), expected, rtol=1e-6)


def test_unsupported_config_names_the_layer(tmp_path):
    path = str(tmp_path / "lora.h5")
    with tf.Graph().as_default():
        K.Sequential([K.layers.Conv2D(2, 3, input_shape=(5, 5, 2))]).save(path)
    import json

    with h5py.File(path, "r+") as f:
        config = json.loads(f.attrs["model_config"])
        config["config"]["layers"][1]["config"]["lora_rank"] = 4  # Keras 3's low-rank adaptation
        f.attrs["model_config"] = json.dumps(config)
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"layer 'conv2d' \(Conv2D\).*lora_rank"):
        K.models.load_model(path)


@pytest.mark.oracle
def test_to_json_and_model_from_json_both_ways():
    tf1, tf_keras = require_tf_keras()
    with tf.Graph().as_default():
        ours = _recurrent(K).to_json()
    with tf1.Graph().as_default():
        theirs = tf_keras.models.model_from_json(ours)
        assert [type(layer).__name__ for layer in theirs.layers] == [
            "InputLayer", "Embedding", "InputLayer", "LSTM", "Dense", "Concatenate", "Dense"]
        text = _sequence(tf_keras).to_json()
    with tf.Graph().as_default():
        model = K.models.model_from_json(text)
        assert [type(layer).__name__ for layer in model.layers] == [
            "Conv1D", "MaxPooling1D", "Bidirectional", "TimeDistributed", "SimpleRNN", "Dense"]
        assert model.predict(SEQUENCES).shape == (24, 3)
