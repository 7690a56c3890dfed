"""``tf.keras.utils``: Sequence and generators in fit/evaluate/predict, the enqueuers,
custom objects, and the small helpers."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
RNG = np.random.default_rng(9)
X = RNG.standard_normal((40, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) > 0).astype(np.float32)[:, None]


class Batches(K.utils.Sequence):
    def __init__(self, batch_size=8):
        super().__init__()
        self.batch_size, self.epochs_ended = batch_size, 0

    def __len__(self):
        return len(X) // self.batch_size

    def __getitem__(self, index):
        part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return X[part], Y[part]

    def on_epoch_end(self):
        self.epochs_ended += 1


def _model():
    model = K.Sequential([K.layers.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(K.optimizers.SGD(0.5), "binary_crossentropy", metrics=["accuracy"])
    return model


def test_fit_evaluate_predict_take_a_sequence_and_generators():
    with tf.Graph().as_default():
        model = _model()
        sequence = Batches()
        history = model.fit(sequence, epochs=6, verbose=0).history
        assert sequence.epochs_ended >= 5 and history["loss"][-1] < history["loss"][0]
        loss, accuracy = model.evaluate(Batches(), verbose=0)
        np.testing.assert_allclose(loss, model.evaluate(X, Y, verbose=0)[0], rtol=1e-5)
        assert model.predict(Batches()).shape == (40, 1)

        def forever():
            while True:
                for i in range(0, 40, 10):
                    yield X[i:i + 10], Y[i:i + 10]

        model.fit(forever(), steps_per_epoch=4, epochs=2, verbose=0)


def test_enqueuers_read_ahead_in_order():
    enqueuer = K.utils.OrderedEnqueuer(Batches(10))
    enqueuer.start(workers=2, max_queue_size=3)
    batches = [next(enqueuer.get()) for _ in range(1)]
    stream = enqueuer.get()
    seen = [next(stream)[0] for _ in range(5)]
    enqueuer.stop()
    np.testing.assert_array_equal(batches[0][0], X[:10])
    np.testing.assert_array_equal(seen[3], X[:10])  # the order restarts after an epoch of 4 batches
    generator = K.utils.GeneratorEnqueuer(i for i in range(5))
    generator.start()
    assert list(generator.get()) == [0, 1, 2, 3, 4]
    generator.stop()


@pytest.fixture
def restored_registry():
    """Keras's registry is global: what a test registers is gone after it (another test in
    the same process expects 'Scale' to be unknown)."""
    from flowmesh.keras.utils import generic_utils

    saved = dict(generic_utils._CUSTOM_OBJECTS), dict(generic_utils._REGISTERED_NAMES)
    yield
    for registry, before in zip((generic_utils._CUSTOM_OBJECTS, generic_utils._REGISTERED_NAMES), saved):
        registry.clear()
        registry.update(before)


def test_custom_objects_and_registration(tmp_path, restored_registry):
    @K.utils.register_keras_serializable(package="Test")
    class Scale(K.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, inputs):
            return inputs * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    assert K.utils.get_registered_name(Scale) == "Test>Scale"
    assert K.utils.get_registered_object("Test>Scale") is Scale
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(2, input_shape=(3,)), Scale(3.0)])
        model.save(str(tmp_path / "m.h5"))
    with tf.Graph().as_default():
        loaded = K.models.load_model(str(tmp_path / "m.h5"), compile=False)
        assert loaded.layers[-1].factor == 3.0
    with K.utils.custom_object_scope({"Twice": Scale}):
        assert K.utils.get_custom_objects()["Twice"] is Scale
    assert "Twice" not in K.utils.get_custom_objects()
    config = K.utils.serialize_keras_object(K.regularizers.L2(0.5))
    assert K.utils.deserialize_keras_object(config, module_objects={"L2": K.regularizers.L2}).l2 == 0.5


def test_small_helpers(tmp_path, monkeypatch):
    np.testing.assert_allclose(K.utils.normalize(np.array([[3.0, 4.0]])), [[0.6, 0.8]])
    np.testing.assert_array_equal(K.utils.to_ordinal([0, 2, 1], 3), [[0, 0], [1, 1], [1, 0]])
    assert K.utils.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    assert K.utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    with tf.Graph().as_default():
        a, b = K.Input((2,)), K.Input((3,))
        out = K.layers.Dense(1)(K.layers.concatenate([a, b]))
        assert K.utils.get_source_inputs(out) == [a, b]
        K.utils.set_random_seed(3)
        matrix = K.utils.warmstart_embedding_matrix(["a", "b"], ["b", "c", "a"], np.array([[1.0], [2.0]]))
        values = K.backend.get_value(matrix)
        assert values[0, 0] == 2.0 and values[2, 0] == 1.0
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not download.*place it at"):
        K.utils.get_file("mnist.npz", origin="https://example.invalid/mnist.npz")
    (tmp_path / ".keras" / "datasets").mkdir(parents=True)
    (tmp_path / ".keras" / "datasets" / "mnist.npz").write_bytes(b"x")
    assert K.utils.get_file("mnist.npz").endswith(".keras/datasets/mnist.npz")
    import threading

    ticks, twice = [], threading.Event()

    def tick():
        ticks.append(1)
        if len(ticks) >= 2:
            twice.set()

    thread = K.utils.TimedThread(0.01, on_interval=tick)
    with thread:
        assert twice.wait(timeout=10)
    assert not thread.is_alive()
