"""``tf.keras.applications.imagenet_utils``: ImageNet input preprocessing, prediction
decoding, and the helpers every application model shares (input shapes, the ``weights``
argument, the pooling head, loading weight files).

Keras's pretrained weight files and ``imagenet_class_index.json`` are read from the Keras
cache (``~/.keras/models``) as tf-keras's ``get_file`` would leave them; flowmesh does not
download, so a missing file raises an error saying what to place where.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import numpy as np

from flowmesh.keras import activations, backend

CLASS_INDEX: dict[str, Any] | None = None
CLASS_INDEX_PATH = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
_MODES = ("caffe", "tf", "torch")


def preprocess_input(x: Any, data_format: str | None = None, mode: str = "caffe") -> Any:
    """Scales a batch of RGB images (0..255) as a model's ImageNet weights expect.

    Args:
        x: a float or integer NumPy array, or a tensor, of 3 channels.
        data_format: ``channels_last`` or ``channels_first`` (default: the backend's).
        mode: ``caffe`` (RGB -> BGR, minus the ImageNet channel means), ``tf`` (to -1..1)
            or ``torch`` (to 0..1, then the ImageNet means and standard deviations).

    Returns:
        The preprocessed array or tensor (a NumPy float input is changed in place, as in
        tf-keras).

    Raises:
        ValueError: an unknown ``mode`` or ``data_format``.
    """
    if mode not in _MODES:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = backend.image_data_format()
    elif data_format not in ("channels_first", "channels_last"):
        raise ValueError("Expected data_format to be one of `channels_first` or `channels_last`. "
                         f"Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    return _preprocess_symbolic(x, data_format, mode)


def _mean_std(mode: str) -> tuple[list[float], list[float] | None]:
    if mode == "torch":
        return [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    return [103.939, 116.779, 123.68], None


def _preprocess_numpy(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(backend.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
    else:  # caffe: RGB -> BGR
        x = x[..., ::-1] if data_format == "channels_last" else (x[::-1, ...] if x.ndim == 3 else x[:, ::-1, ...])
    mean, std = _mean_std(mode)
    for c in range(3):
        index = (..., c) if data_format == "channels_last" else ((c,) if x.ndim == 3 else (slice(None), c))
        x[index] -= mean[c]
        if std is not None:
            x[index] /= std[c]
    return x


def _preprocess_symbolic(x: Any, data_format: str, mode: str) -> Any:
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
    elif data_format == "channels_last":
        x = x[..., ::-1]
    else:
        x = x[::-1, ...] if backend.ndim(x) == 3 else x[:, ::-1, ...]
    mean, std = _mean_std(mode)
    x = backend.bias_add(x, backend.constant(-np.array(mean), dtype=backend.dtype(x)), data_format=data_format)
    if std is not None:
        std_tensor = backend.constant(np.array(std), dtype=backend.dtype(x))
        if data_format == "channels_first":
            std_tensor = backend.reshape(std_tensor, (-1, 1, 1))
        x = x / std_tensor
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[str, str, float]]]:
    """``(class id, class name, score)`` of the ``top`` ImageNet classes of each row.

    Args:
        preds: a ``(samples, 1000)`` array of class scores.
        top: how many classes per row.

    Raises:
        ValueError: ``preds`` is not ``(samples, 1000)``.
        FileNotFoundError: ``imagenet_class_index.json`` is not in the Keras cache.
    """
    global CLASS_INDEX
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape "
                         f"(samples, 1000)). Found array with shape: {preds.shape}")
    if CLASS_INDEX is None:
        from flowmesh.keras.utils.generic_utils import get_file

        with open(get_file("imagenet_class_index.json", CLASS_INDEX_PATH, cache_subdir="models")) as f:
            CLASS_INDEX = json.load(f)
    results = []
    for pred in preds:
        top_indices = pred.argsort()[-top:][::-1]
        result = [(*CLASS_INDEX[str(i)], pred[i]) for i in top_indices]
        result.sort(key=lambda row: row[2], reverse=True)
        results.append(result)
    return results


def obtain_input_shape(input_shape: Any, default_size: int, min_size: int, data_format: str,
                       require_flatten: bool, weights: Any = None) -> tuple[Any, ...]:
    """The model's input shape from the argument (tf-keras's rules: ImageNet weights with the
    top need the default size; at least ``min_size`` pixels; a static shape with the top).

    Raises:
        ValueError: a shape these rules refuse.
    """
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in (1, 3):
            warnings.warn(f"This model usually expects 1 or 3 input channels. However, it was passed an "
                          f"input_shape with {channels} input channels.", stacklevel=3)
        default_shape = (channels, default_size, default_size) if first else (default_size, default_size, channels)
    else:
        default_shape = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` "
                             f"should be {default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, spatial = (input_shape[0], input_shape[1:]) if first else (input_shape[-1], input_shape[:2])
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(size is not None and size < min_size for size in spatial):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if first else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(f"If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return input_shape


def correct_pad(inputs: Any, kernel_size: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    """The zero padding before a strided convolution of ``kernel_size`` that centres it as
    TensorFlow's ``SAME`` padding would on even sizes (MobileNetV2, EfficientNet)."""
    img_dim = 2 if backend.image_data_format() == "channels_first" else 1
    input_size = backend.int_shape(inputs)[img_dim:img_dim + 2]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if input_size[0] is None else (1 - input_size[0] % 2, 1 - input_size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1])


def validate_activation(classifier_activation: Any, weights: Any) -> None:
    """Pretrained weights allow only ``None`` and ``softmax`` on the top layer.

    Raises:
        ValueError: another activation with ``weights``.
    """
    if weights is None:
        return
    activation = activations.get(classifier_activation)
    if activation not in (activations.get("softmax"), activations.get(None)):
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` "
                         "argument when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


# The helpers below are flowmesh's: the steps every application repeats in tf-keras.

def check_weights(weights: Any, include_top: bool, classes: int) -> None:
    """tf-keras's checks of ``weights`` and ``classes``.

    Raises:
        ValueError: ``weights`` is neither None, ``imagenet`` nor an existing file, or
            ``imagenet`` with the top and ``classes != 1000``.
    """
    if not (weights in ("imagenet", None) or os.path.exists(str(weights))):
        raise ValueError("The `weights` argument should be either `None` (random initialization), `imagenet` "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  "
                         f"Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights` as `"imagenet"` with `include_top` as true, `classes` should be '
                         f"1000.  Received `classes={classes}`")


def image_input(input_tensor: Any, input_shape: Any) -> Any:
    """The model's input: ``Input(shape)``, ``input_tensor`` itself when it is a Keras
    tensor, else an ``Input`` wrapping it."""
    from flowmesh.keras.engine.input_layer import Input

    if input_tensor is None:
        return Input(shape=input_shape)
    if not backend.is_keras_tensor(input_tensor):
        return Input(tensor=input_tensor, shape=input_shape)
    return input_tensor


def pooled(x: Any, pooling: str | None, names: tuple[str | None, str | None] = (None, None)) -> Any:
    """``pooling="avg"``/``"max"``: the global pooling of a model without its top."""
    from flowmesh.keras import layers

    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names[1])(x)
    return x


def get_source_inputs(tensor: Any) -> list[Any]:
    """The ``Input`` tensors ``tensor`` was computed from."""
    from flowmesh.keras.utils.generic_utils import get_source_inputs as sources

    return sources(tensor)


def make_model(input_tensor: Any, img_input: Any, outputs: Any, name: str) -> Any:
    """``Model(inputs, outputs, name)`` whose inputs are ``input_tensor``'s sources."""
    from flowmesh.keras.engine.training import Model
    from flowmesh.keras.utils.generic_utils import get_source_inputs

    inputs = get_source_inputs(input_tensor) if input_tensor is not None else img_input
    return Model(inputs, outputs, name=name)


def load_weights(model: Any, weights: Any, file_name: str, origin: str) -> Any:
    """Loads ``weights`` (a path) into ``model``; ``"imagenet"`` loads ``file_name`` from the
    Keras cache (``~/.keras/models``), where tf-keras would have downloaded it from
    ``origin``.

    Raises:
        FileNotFoundError: the ImageNet weight file is not in the cache (the message says
            where to get it and where to place it).
    """
    if weights == "imagenet":
        from flowmesh.keras.utils.generic_utils import get_file

        model.load_weights(get_file(file_name, origin, cache_subdir="models"))
    elif weights is not None:
        model.load_weights(weights)
    return model
