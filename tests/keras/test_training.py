"""Keras models in graph mode: functional/subclassed/Sequential, fit options, datasets,
progress output and clear errors that leave the graph untouched."""

import re

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


def _data(n=120, d=6, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = (x[:, :classes].argmax(1)).astype(np.int64)
    return x, y


def _mlp(d=6, classes=3):
    return K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(d,)),
                         K.layers.Dense(classes, activation="softmax")])


def test_fit_learns_and_history():
    x, y = _data()
    model = _mlp()
    model.compile(K.optimizers.Adam(0.05), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=8, verbose=0)
    assert history.epoch == list(range(8))
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["acc"][-1] > 0.85
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.85 and loss == pytest.approx(model.evaluate(x, y, batch_size=7, verbose=0)[0], rel=1e-5)
    assert model.predict(x).shape == (120, 3)


def test_unshuffled_batches_are_views_and_any_layout_trains_alike():
    """shuffle=False feeds row slices of x as views (no copy); a column-major x (whose row
    slices are not contiguous) is copied per batch and gives the same history; x and y are
    left unchanged; a last partial batch is weighted by its size."""
    from flowmesh.keras.engine import data_adapter

    slices = list(data_adapter.batch_slices(10, 4, False, np.random.default_rng()))
    assert slices == [slice(0, 4), slice(4, 8), slice(8, 10)]
    assert [data_adapter.batch_size_of(s) for s in slices] == [4, 4, 2]
    x, y = _data(n=100)
    histories = []
    for data in (x, np.asfortranarray(x)):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            model = _mlp()
            model.compile(K.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
            before = data.copy()
            histories.append(model.fit(data, y, batch_size=32, epochs=2, shuffle=False, verbose=0).history)
            np.testing.assert_array_equal(data, before)
    for key in histories[0]:
        np.testing.assert_allclose(histories[0][key], histories[1][key], rtol=1e-5, err_msg=key)


def test_accuracy_of_a_softmax_output_takes_the_arg_max_of_its_logits():
    """The training step's accuracy reads the logits (the loss does too), so the step runs
    no Softmax; the value is the accuracy of the model's (softmax) predictions."""
    x, y = _data(n=64)
    model = _mlp()
    model.compile(K.optimizers.SGD(0.0), "sparse_categorical_crossentropy", metrics=["accuracy"])
    logs = model.train_on_batch(x, y, return_dict=True)
    argmaxes = [op for op in tf.get_default_graph().get_operations() if op.type == "ArgMax"]
    assert argmaxes and all(op.inputs[0].op.type == "BiasAdd" for op in argmaxes)
    want = float(np.mean(model.predict(x).argmax(-1) == y))
    assert abs(logs["acc"] - want) < 1e-6


def test_initial_epoch_steps_per_epoch_and_callbacks():
    x, y = _data()
    events = []

    class Recorder(K.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            events.append(("epoch", epoch))

        def on_train_batch_end(self, batch, logs=None):
            events.append(("batch", batch, logs["size"]))

    model = _mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=50, epochs=3, initial_epoch=1, steps_per_epoch=4, verbose=0,
                        callbacks=[Recorder()])
    assert history.epoch == [1, 2]
    assert events[:6] == [("epoch", 1), ("batch", 0, 50), ("batch", 1, 50), ("batch", 2, 20),
                          ("batch", 3, 50), ("epoch", 2)]


def test_functional_multi_input_output_with_dicts():
    a = K.Input((4,), name="a")
    b = K.Input((3,), name="b")
    h = K.layers.concatenate([K.layers.Dense(8, activation="relu")(a), b])
    out1 = K.layers.Dense(2, name="cls", activation="softmax")(h)
    out2 = K.layers.Dense(1, name="reg")(h)
    model = K.Model(inputs=[a, b], outputs=[out1, out2])
    model.compile("adam", loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
                  loss_weights={"cls": 1.0, "reg": 0.5}, metrics={"cls": ["accuracy"]})
    rng = np.random.default_rng(0)
    xa, xb = rng.standard_normal((40, 4)), rng.standard_normal((40, 3))
    ys = {"cls": (xa[:, 0] > 0).astype(np.int64), "reg": xb.sum(1, keepdims=True)}
    history = model.fit({"a": xa, "b": xb}, ys, epochs=2, batch_size=8, verbose=0)
    assert sorted(history.history) == ["cls_acc", "cls_loss", "loss", "reg_loss"]
    cls, reg = model.predict([xa, xb])
    assert cls.shape == (40, 2) and reg.shape == (40, 1)
    assert [layer.name for layer in model.layers][-2:] == ["cls", "reg"]


def test_subclassed_model_builds_from_data():
    class Net(K.Model):
        def __init__(self):
            super().__init__(name="net")
            self.hidden = K.layers.Dense(8, activation="tanh")
            self.drop = K.layers.Dropout(0.2)
            self.out = K.layers.Dense(1)

        def call(self, inputs, training=None):
            return self.out(self.drop(self.hidden(inputs), training=training))

    x, _ = _data()
    y = x[:, :1] * 2.0
    model = Net()
    model.compile(K.optimizers.SGD(0.05), "mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=20, epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert [w.name for w in model.trainable_weights] == ["net/dense/kernel:0", "net/dense/bias:0",
                                                         "net/dense_1/kernel:0", "net/dense_1/bias:0"]
    assert model.predict(x[:3]).shape == (3, 1)


def test_fit_on_dataset():
    x, y = _data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(25)
    model = _mlp()
    model.compile(K.optimizers.Adam(0.05), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(dataset, epochs=4, verbose=0, validation_data=dataset)
    assert len(history.history["loss"]) == 4 and "val_acc" in history.history
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.predict(tf.data.Dataset.from_tensor_slices(x).batch(50)).shape == (120, 3)
    steps = model.fit(dataset.repeat(), epochs=1, steps_per_epoch=3, verbose=0)
    assert len(steps.history["loss"]) == 1


def test_progress_output(capsys):
    x, y = _data(n=64)
    model = _mlp()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=16, epochs=2, verbose=2, validation_split=0.25)
    out = capsys.readouterr().out
    assert "Train on 48 samples, validate on 16 samples" in out
    assert re.search(r"Epoch 2/2\n48/48 - \d+s - loss: \d\.\d{4} - acc: \d\.\d{4} - val_loss: "
                     r"\d\.\d{4} - val_acc: \d\.\d{4} - \d+(us|ms|s)/sample", out), out
    model.fit(x, y, batch_size=16, epochs=1, verbose=1)
    out = capsys.readouterr().out
    assert re.search(r"64/64 \[={30}\] - \d+s \d+(us|ms|s)/sample - loss: \d\.\d{4} - acc: \d\.\d{4}", out), out


def test_summary(capsys):
    model = _mlp()
    model.summary()
    out = capsys.readouterr().out
    assert 'Model: "sequential' in out and "dense (Dense)" in out and "(None, 16)" in out
    assert "Total params: 163" in out and "Trainable params: 163" in out


def _ops(graph):
    return len(graph.get_operations())


def test_errors_are_clear_and_leave_the_graph_alone(fresh_graph):
    x, y = _data()
    model = _mlp()
    before = _ops(fresh_graph)
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="Valid names: .*'adam'"):
        model.compile("adamx", "mse")
    with pytest.raises(ValueError, match="Unknown loss function: 'msee'.*'mse'"):
        model.compile("adam", "msee")
    with pytest.raises(ValueError, match="Unknown metric function: 'acuracy'.*'accuracy'"):
        model.compile("adam", "mse", metrics=["acuracy"])
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="120 input samples and 100 target samples"):
        model.fit(x, y[:100], verbose=0)
    with pytest.raises(ValueError, match=r"shape \(120, 5\).*output of shape \(None, 3\).*dense_1"):
        model.fit(x, np.zeros((120, 5)), verbose=0)
    assert _ops(fresh_graph) == before


def test_incompatible_layers_name_both():
    model = K.Sequential([K.layers.Dense(4, input_shape=(3,), name="first")])
    with pytest.raises(ValueError) as info:
        model.add(K.layers.Conv2D(2, 3, name="second"))
    text = str(info.value)
    assert "second" in text and "first" in text and "(None, 4)" in text and "ndim=4" in text
    inputs = K.Input((5,))
    hidden = K.layers.Dense(3, name="h")(inputs)
    shared = K.layers.Dense(2, name="shared")
    shared(inputs)
    with pytest.raises(ValueError, match=r"shared.*axis -1.*value 5.*\(None, 3\).*\"h\""):
        shared(hidden)


@pytest.mark.oracle
def test_one_dimensional_targets_are_columns_as_in_tf_keras(fresh_graph):
    """``fit(x, labels)`` with labels of shape [N] trains a ``Dense(1)`` output (tf-keras expands
    1-D targets to [N, 1]); the same labels against a ``Dense(3)`` under mse are an error in both."""
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    rng = np.random.default_rng(0)
    x = rng.random((64, 4), dtype=np.float32)
    y = (x.sum(1) > 2).astype(np.float32)
    kernel, bias = rng.standard_normal((4, 1)).astype(np.float32), np.zeros(1, np.float32)

    def curve(keras):
        model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
        model.set_weights([kernel, bias])
        model.compile(keras.optimizers.legacy.SGD(0.1), "binary_crossentropy", metrics=["accuracy"])
        history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0).history
        accuracy = history["acc"] if "acc" in history else history["accuracy"]  # TF1 / TF2 names
        return history["loss"] + accuracy + [model.evaluate(x, y, verbose=0)[0]]

    ours = curve(K)
    with tf1.Graph().as_default() as theirs_graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=theirs_graph))
        theirs = curve(tf_keras)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    wide = K.Sequential([K.layers.Dense(3, input_shape=(4,))])
    wide.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"shape \(64, 1\).*output of shape \(None, 3\).*mean_squared_error"):
        wide.fit(x, y, verbose=0)
