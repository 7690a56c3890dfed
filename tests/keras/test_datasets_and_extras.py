"""``tf.keras.datasets`` loaders reading Keras's cache (against tf-keras's loaders given the
same files), and the small extras: mish, model_from_yaml, BaseLogger, RemoteMonitor,
split_dataset."""

from __future__ import annotations

import gzip
import json
import os
import pickle

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_keras

K = tf.keras
RNG = np.random.default_rng(10)


def _ragged(count, longest):
    out = np.empty(count, dtype=object)
    out[:] = [list(RNG.integers(1, 30, RNG.integers(1, longest))) for _ in range(count)]
    return out


def _write_cache(root):
    data = root / ".keras" / "datasets"
    (data / "fashion-mnist").mkdir(parents=True)
    np.savez(data / "mnist.npz", x_train=RNG.integers(0, 255, (6, 28, 28), dtype=np.uint8),
             y_train=np.arange(6), x_test=RNG.integers(0, 255, (2, 28, 28), dtype=np.uint8), y_test=np.arange(2))
    np.savez(data / "boston_housing.npz", x=RNG.standard_normal((20, 13)), y=RNG.standard_normal(20))
    np.savez(data / "imdb.npz", x_train=_ragged(12, 9), y_train=RNG.integers(0, 2, 12),
             x_test=_ragged(8, 9), y_test=RNG.integers(0, 2, 8))
    np.savez(data / "reuters.npz", x=_ragged(20, 12), y=RNG.integers(0, 46, 20))
    (data / "imdb_word_index.json").write_text(json.dumps({"the": 1, "movie": 2}))
    for name, count in (("train-labels-idx1-ubyte.gz", 5), ("t10k-labels-idx1-ubyte.gz", 3)):
        with gzip.open(data / "fashion-mnist" / name, "wb") as f:
            f.write(bytes(8) + bytes(range(count)))
        images = name.replace("labels-idx1", "images-idx3")
        with gzip.open(data / "fashion-mnist" / images, "wb") as f:
            f.write(bytes(16) + RNG.integers(0, 255, count * 784, dtype=np.uint8).tobytes())
    batches = data / "cifar-10-batches-py"  # tiny batches: tf-keras's loader expects 10000 images each
    batches.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(batches / name, "wb") as f:
            pickle.dump({b"data": RNG.integers(0, 255, (2, 3072), dtype=np.uint8), b"labels": [1, 7]}, f)


@pytest.mark.oracle
def test_dataset_loaders_match_tf_keras(tmp_path, monkeypatch):
    from flowmesh.testing.keras_oracle import require_tf_keras

    _, tf_keras = require_tf_keras()
    _write_cache(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    import importlib

    cache = str(tmp_path / ".keras" / "datasets")
    for name in ("mnist", "boston_housing", "imdb", "reuters", "fashion_mnist"):
        module = importlib.import_module(f"tf_keras.src.datasets.{name}")

        def offline(fname=None, origin=None, cache_subdir="datasets", untar=False, **kwargs):
            folder = os.path.join(cache, cache_subdir[len("datasets/"):] if cache_subdir.startswith("datasets/")
                                  else "")
            return os.path.join(folder, fname)

        monkeypatch.setattr(module, "get_file", offline)
    calls = {
        "mnist": ({},), "boston_housing": ({"test_split": 0.3},), "fashion_mnist": ({},),
        "imdb": ({}, {"num_words": 10, "skip_top": 2}, {"maxlen": 6, "oov_char": None}),
        "reuters": ({"num_words": 12, "test_split": 0.25}, {"maxlen": 7, "start_char": None}),
    }
    for name, variants in calls.items():
        for kwargs in variants:
            theirs = getattr(tf_keras.datasets, name).load_data(**kwargs)
            ours = getattr(K.datasets, name).load_data(**kwargs)
            for split_ours, split_theirs in zip(ours, theirs):
                for a, b in zip(split_ours, split_theirs):
                    assert a.shape == b.shape, (name, kwargs)
                    if a.dtype == object:
                        assert [list(r) for r in a] == [list(r) for r in b], (name, kwargs)
                    else:
                        np.testing.assert_array_equal(a, b, err_msg=f"{name} {kwargs}")
    assert K.datasets.imdb.get_word_index() == {"the": 1, "movie": 2}
    (x_train, y_train), (x_test, y_test) = K.datasets.cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train.shape == (10, 1) and x_test.shape == (2, 32, 32, 3)
    assert list(y_test[:, 0]) == [1, 7]


def test_missing_dataset_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mnist.npz.*place it at .*\.keras/datasets/mnist.npz"):
        K.datasets.mnist.load_data()


def test_extras():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = np.linspace(-3, 3, 7).astype(np.float32)
        np.testing.assert_allclose(sess.run(K.activations.mish(tf.constant(x))),
                                   x * np.tanh(np.log1p(np.exp(x))), rtol=1e-5)
        assert K.activations.get("mish") is K.activations.mish
    with pytest.raises(RuntimeError, match="model_from_yaml.*removed"):
        K.models.model_from_yaml("a: 1")
    with tf.Graph().as_default(), tf.Session() as sess:
        left, right = K.utils.split_dataset((np.arange(10), np.arange(10) * 2), left_size=0.7)
        a = sess.run(left.batch(20).make_one_shot_iterator().get_next())
        b = sess.run(right.batch(20).make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(a[0], np.arange(7))
    np.testing.assert_array_equal(b[1], [14, 16, 18])


def test_base_logger_and_remote_monitor():
    import http.server
    import threading

    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tf.Graph().as_default():
            model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
            model.compile("sgd", "mse")
            logger = K.callbacks.BaseLogger()
            monitor = K.callbacks.RemoteMonitor(root=f"http://127.0.0.1:{server.server_port}", send_as_json=True)
            history = model.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=3, epochs=2, verbose=0,
                                callbacks=[logger, monitor])
    finally:
        server.shutdown()
        thread.join()
    assert [json.loads(r)["epoch"] for r in received] == [0, 1]
    assert abs(json.loads(received[1])["loss"] - history.history["loss"][1]) < 1e-6


@pytest.mark.oracle
def test_reuters_label_names_are_tf_keras():
    _, tf_keras = require_tf_keras()
    assert K.datasets.reuters.get_label_names() == tf_keras.datasets.reuters.get_label_names()
