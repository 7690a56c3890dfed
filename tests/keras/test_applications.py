"""tf.keras.applications against tf-keras: the same layers (in tf-keras's order, which HDF5
weight files follow), weights and outputs from one weight file, both ways; ImageNet
preprocessing; ``weights="imagenet"`` read from the Keras cache."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import require_tf_keras

K = tf.keras
APPS = K.applications

# name, kwargs: small inputs keep tf-keras's graph construction (the slow side) short.
CASES = [
    ("RegNetX002", {"input_shape": (32, 32, 3), "classes": 7}),  # grouped convolutions
    ("MobileNetV2", {"input_shape": (32, 32, 3), "include_top": False, "pooling": "avg", "alpha": 0.5}),
    ("VGG16", {"input_shape": (32, 32, 3), "include_top": False, "pooling": "max"}),
    pytest.param("ResNet50", {"input_shape": (32, 32, 3), "classes": 5}, marks=pytest.mark.slow),
    pytest.param("ResNet50V2", {"input_shape": (32, 32, 3), "include_top": False}, marks=pytest.mark.slow),
    pytest.param("RegNetY002", {"input_shape": (32, 32, 3), "include_top": False}, marks=pytest.mark.slow),
    pytest.param("MobileNet", {"input_shape": (32, 32, 3), "classes": 4, "alpha": 0.25}, marks=pytest.mark.slow),
    pytest.param("EfficientNetB0", {"input_shape": (32, 32, 3), "include_top": False, "pooling": "avg"},
                 marks=pytest.mark.slow),
    pytest.param("Xception", {"input_shape": (71, 71, 3), "include_top": False, "pooling": "avg"},
                 marks=pytest.mark.slow),
    pytest.param("InceptionV3", {"input_shape": (75, 75, 3), "classes": 3}, marks=pytest.mark.slow),
    # DenseNet121's 429 layers take tf-keras minutes: the same builder with fewer blocks
    pytest.param("densenet.DenseNet", {"blocks": [2, 3, 2, 2], "input_shape": (32, 32, 3), "classes": 3},
                 marks=pytest.mark.slow),
]


def _builder(applications, name: str):
    """``applications.<name>``; a dotted name is a builder of a model's module (tf-keras's
    from its source package, whose modules keep them)."""
    if "." not in name:
        return getattr(applications, name)
    module, function = name.split(".")
    if applications is APPS:
        return getattr(getattr(APPS, module), function)
    import importlib

    return getattr(importlib.import_module(f"tf_keras.src.applications.{module}"), function)


def _weighted(model) -> list[tuple[str, list[tuple[int, ...]]]]:
    return [(layer.name, [tuple(w.shape.as_list()) for w in layer.weights]) for layer in model.layers
            if layer.weights]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "kwargs"), CASES)
def test_application_equals_tf_keras(name, kwargs, tmp_path):
    tf1, tf_keras = require_tf_keras()
    x = np.random.default_rng(0).uniform(0, 255, (2, *kwargs["input_shape"])).astype(np.float32)
    theirs_file, ours_file = str(tmp_path / "theirs.h5"), str(tmp_path / "ours.h5")
    their_graph = tf1.Graph()
    with their_graph.as_default():
        theirs = _builder(tf_keras.applications, name)(weights=None, **kwargs)
        expected = theirs.predict(x)
        theirs.save_weights(theirs_file)
        structure = [(layer.name, [tuple(w.shape.as_list()) for w in layer.weights]) for layer in theirs.layers
                     if layer.weights]
        params, model_name = theirs.count_params(), theirs.name
    with tf.Graph().as_default():
        ours = _builder(APPS, name)(weights=theirs_file, **kwargs)
        assert _weighted(ours) == structure
        assert (ours.count_params(), ours.name) == (params, model_name)
        np.testing.assert_allclose(ours.predict(x), expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())
        # our file into tf-keras: different weights (a training step) come back there
        ours.compile("sgd", "mse")
        ours.train_on_batch(x, np.ones_like(expected))
        trained = ours.predict(x)
        ours.save_weights(ours_file)
    with their_graph.as_default():  # the same tf-keras model, reading our file by layer order
        theirs.load_weights(ours_file)
        # after a training step, values near zero carry the step's float32 rounding (torch's
        # summation order follows its thread count): a tolerance on the output's scale
        np.testing.assert_allclose(theirs.predict(x), trained, rtol=1e-3, atol=1e-3 * np.abs(trained).max())


@pytest.mark.parametrize(("name", "params"), [("ResNet152", 58370944), ("ResNet101V2", 42626560),
                                              ("DenseNet201", 18321984), ("VGG19", 20024384),
                                              ("RegNetX320", 105452576), ("MobileNet", 3228864),
                                              ("EfficientNetB7", 64097687)])
def test_deep_models_build_with_keras_parameter_counts(name, params):
    # tf-keras's counts without the top (its documentation's table less the classifier)
    with tf.Graph().as_default():
        model = getattr(APPS, name)(weights=None, include_top=False, input_shape=(32, 32, 3))
        assert model.count_params() == params
        assert model.output_shape[-1] == model.layers[-1].output_shape[-1]


def test_imagenet_weights_come_from_the_keras_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with tf.Graph().as_default(), pytest.raises(FileNotFoundError,
                                                match=r"vgg16_weights_tf_dim_ordering_tf_kernels_notop\.h5"):
        APPS.VGG16(include_top=False, input_shape=(32, 32, 3))
    cached = tmp_path / ".keras" / "models" / "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"
    cached.parent.mkdir(parents=True)
    x = np.random.default_rng(1).uniform(0, 255, (1, 32, 32, 3)).astype(np.float32)
    with tf.Graph().as_default():
        source = APPS.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
        source.save_weights(str(cached))
        expected = source.predict(x)
    with tf.Graph().as_default():
        loaded = APPS.VGG16(include_top=False, input_shape=(32, 32, 3))  # weights="imagenet"
        np.testing.assert_allclose(loaded.predict(x), expected, rtol=1e-5)


def test_argument_errors_are_tf_keras_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="`classes` should be 1000"):
            APPS.ResNet50(classes=10)
        with pytest.raises(ValueError, match="should be either `None`"):
            APPS.VGG19(weights="/no/such/file.h5")
        with pytest.raises(ValueError, match=r"should be \(224, 224, 3\)"):
            APPS.DenseNet121(input_shape=(64, 64, 3))
        with pytest.raises(ValueError, match="at least 32x32"):
            APPS.MobileNetV2(weights=None, include_top=False, input_shape=(16, 16, 3))
        with pytest.raises(ValueError, match="Only `None` and `softmax`"):
            APPS.ResNet50V2(classifier_activation="relu")


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input_equals_tf_keras(mode, data_format):
    tf1, tf_keras = require_tf_keras()
    from tf_keras.src.applications import imagenet_utils as theirs

    images = np.random.default_rng(2).uniform(0, 255, (2, 3, 4, 3) if data_format == "channels_last"
                                              else (2, 3, 4, 5)).astype(np.float32)
    expected = theirs.preprocess_input(images.copy(), data_format=data_format, mode=mode)
    ours = APPS.imagenet_utils.preprocess_input(images.copy(), data_format=data_format, mode=mode)
    np.testing.assert_allclose(ours, expected, rtol=1e-6)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        symbolic = sess.run(theirs.preprocess_input(tf1.constant(images), data_format=data_format, mode=mode))
    with tf.Graph().as_default(), tf.Session() as sess:
        ours_symbolic = sess.run(APPS.imagenet_utils.preprocess_input(tf.constant(images), data_format=data_format,
                                                                     mode=mode))
    np.testing.assert_allclose(ours_symbolic, symbolic, rtol=1e-5, atol=1e-4)


def test_model_modules_have_their_preprocessing():
    images = np.full((1, 2, 2, 3), 255.0, np.float32)
    assert APPS.resnet_v2.preprocess_input(images.copy()).max() == 1.0
    assert APPS.mobilenet_v2.preprocess_input(images.copy()).min() == 1.0
    np.testing.assert_allclose(APPS.vgg16.preprocess_input(images.copy())[0, 0, 0],
                               [255 - 103.939, 255 - 116.779, 255 - 123.68], rtol=1e-6)
    assert APPS.regnet.preprocess_input(images) is images
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        APPS.resnet50.decode_predictions(np.zeros((1, 10)))
