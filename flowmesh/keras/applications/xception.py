"""Xception as tf-keras builds it (same layers and names, so Keras's weight files load).
Reference: Chollet, "Xception: Deep Learning with Depthwise Separable Convolutions" (CVPR
2017)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"


def _axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else -1


def _sep_bn(x: Any, filters: int, name: str) -> Any:
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=_axis(), name=name + "_bn")(x)


def _residual(x: Any, filters: int) -> Any:
    residual = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=_axis())(residual)


def _entry_block(x: Any, block: int, filters: tuple[int, int], relu_first: bool = True) -> Any:
    """Two separable convolutions and a strided max pooling, plus a strided 1x1 shortcut."""
    residual = _residual(x, filters[1])
    if relu_first:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _sep_bn(x, filters[0], f"block{block}_sepconv1")
    x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sep_bn(x, filters[1], f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
             pooling: str | None = None, classes: int = 1000, classifier_activation: Any = "softmax") -> Any:
    """Instantiates the Xception architecture (299x299 images by default).

    Raises:
        ValueError: the checks every application makes.
    """
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=71,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = layers.BatchNormalization(axis=_axis(), name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=_axis(), name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _entry_block(x, 2, (128, 128), relu_first=False)
    x = _entry_block(x, 3, (256, 256))
    x = _entry_block(x, 4, (728, 728))
    for i in range(8):
        residual = x
        prefix = f"block{i + 5}"
        for k in (1, 2, 3):
            x = layers.Activation("relu", name=f"{prefix}_sepconv{k}_act")(x)
            x = _sep_bn(x, 728, f"{prefix}_sepconv{k}")
        x = layers.add([x, residual])
    x = _entry_block(x, 13, (728, 1024))
    x = layers.Activation("relu", name="block14_sepconv1_act")(_sep_bn(x, 1536, "block14_sepconv1"))
    x = layers.Activation("relu", name="block14_sepconv2_act")(_sep_bn(x, 2048, "block14_sepconv2"))
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(input_tensor, img_input, x, "xception")
    file_name = f"xception_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Xception's preprocessing: ``tf`` mode (pixels scaled to -1..1)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
