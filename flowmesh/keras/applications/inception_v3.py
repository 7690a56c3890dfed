"""InceptionV3 as tf-keras builds it (same layers, names and order, so Keras's weight
files load). Reference: Szegedy et al., "Rethinking the Inception Architecture for
Computer Vision" (CVPR 2016)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"


def _axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else 3


def conv2d_bn(x: Any, filters: int, num_row: int, num_col: int, padding: str = "same",
              strides: tuple[int, int] = (1, 1), name: str | None = None) -> Any:
    """Convolution (no bias), batch norm without scale, ReLU."""
    bn_name, conv_name = (None, None) if name is None else (name + "_bn", name + "_conv")
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=conv_name)(x)
    x = layers.BatchNormalization(axis=_axis(), scale=False, name=bn_name)(x)
    return layers.Activation("relu", name=name)(x)


def _avg_pool_branch(x: Any, filters: int) -> Any:
    return conv2d_bn(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, 1, 1)


def _block_35(x: Any, pool_filters: int, name: str) -> Any:
    branch1x1 = conv2d_bn(x, 64, 1, 1)
    branch5x5 = conv2d_bn(conv2d_bn(x, 48, 1, 1), 64, 5, 5)
    branch3x3dbl = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    branch_pool = _avg_pool_branch(x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool], axis=_axis(), name=name)


def _block_17(x: Any, width: int, name: str) -> Any:
    branch1x1 = conv2d_bn(x, 192, 1, 1)
    branch7x7 = conv2d_bn(conv2d_bn(conv2d_bn(x, width, 1, 1), width, 1, 7), 192, 7, 1)
    branch7x7dbl = conv2d_bn(x, width, 1, 1)
    for filters, rows, cols in ((width, 7, 1), (width, 1, 7), (width, 7, 1), (192, 1, 7)):
        branch7x7dbl = conv2d_bn(branch7x7dbl, filters, rows, cols)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool], axis=_axis(), name=name)


def _block_8(x: Any, i: int) -> Any:
    branch1x1 = conv2d_bn(x, 320, 1, 1)
    branch3x3 = conv2d_bn(x, 384, 1, 1)
    branch3x3 = layers.concatenate([conv2d_bn(branch3x3, 384, 1, 3), conv2d_bn(branch3x3, 384, 3, 1)],
                                   axis=_axis(), name=f"mixed9_{i}")
    branch3x3dbl = conv2d_bn(conv2d_bn(x, 448, 1, 1), 384, 3, 3)
    branch3x3dbl = layers.concatenate([conv2d_bn(branch3x3dbl, 384, 1, 3), conv2d_bn(branch3x3dbl, 384, 3, 1)],
                                      axis=_axis())
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=_axis(), name=f"mixed{9 + i}")


def InceptionV3(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
                classifier_activation: Any = "softmax") -> Any:
    """Instantiates the Inception v3 architecture (299x299 images by default).

    Raises:
        ValueError: the checks every application makes.
    """
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=299, min_size=75,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = conv2d_bn(img_input, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _block_35(x, 32, "mixed0")
    x = _block_35(x, 64, "mixed1")
    x = _block_35(x, 64, "mixed2")
    branch3x3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    branch3x3dbl = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=_axis(), name="mixed3")
    x = _block_17(x, 128, "mixed4")
    x = _block_17(x, 160, "mixed5")
    x = _block_17(x, 160, "mixed6")
    x = _block_17(x, 192, "mixed7")
    branch3x3 = conv2d_bn(conv2d_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    branch7x7x3 = conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=_axis(), name="mixed8")
    x = _block_8(x, 0)
    x = _block_8(x, 1)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(input_tensor, img_input, x, "inception_v3")
    file_name = f"inception_v3_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Inception's preprocessing: ``tf`` mode (pixels scaled to -1..1)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
