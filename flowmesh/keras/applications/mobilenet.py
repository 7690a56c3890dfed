"""MobileNet (v1) and MobileNetV2 as tf-keras builds them (same layers and names, so
Keras's weight files load). References: Howard et al., "MobileNets" (2017); Sandler et al.,
"MobileNetV2: Inverted Residuals and Linear Bottlenecks" (CVPR 2018)."""

from __future__ import annotations

import logging
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

V1_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
V2_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
_V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
              (512, 1), (512, 1), (1024, 2), (1024, 1))  # (pointwise filters, stride) of blocks 1..13
_V2_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
              (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6),
              (160, 1, 6), (320, 1, 6))  # (filters, stride, expansion) of blocks 0..16


def _channel_axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else -1


def _rows_for(input_shape: Any, sizes: tuple[int, ...]) -> int:
    """The default size: the input's when it is square and one of ``sizes``, else 224."""
    if input_shape is None:
        return 224
    rows, cols = (input_shape[1], input_shape[2]) if backend.image_data_format() == "channels_first" \
        else (input_shape[0], input_shape[1])
    return rows if rows == cols and rows in sizes else 224


def _checked_rows(input_shape: Any, weights: Any, sizes: tuple[int, ...]) -> int:
    rows, cols = input_shape[:2] if backend.image_data_format() == "channels_last" else input_shape[1:]
    if weights == "imagenet" and (rows != cols or rows not in sizes):
        logging.getLogger("flowmesh").warning(
            "`input_shape` is undefined or non-square, or `rows` is not in %s. Weights for input shape "
            "(224, 224) will be loaded as the default.", list(sizes))
        return 224
    return rows


def MobileNet(input_shape: Any = None, alpha: float = 1.0, depth_multiplier: int = 1, dropout: float = 1e-3,
              include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              pooling: str | None = None, classes: int = 1000, classifier_activation: Any = "softmax",
              **kwargs: Any) -> Any:
    """Instantiates the MobileNet architecture (depthwise separable convolutions).

    Args:
        alpha: width multiplier of every layer's filters.
        depth_multiplier: the depthwise convolutions' channel multiplier.
        dropout: the dropout rate before the classifier.
        input_shape, include_top, weights, input_tensor, pooling, classes,
            classifier_activation: as every Keras application takes them.

    Raises:
        ValueError: ImageNet weights with a ``depth_multiplier``/``alpha`` they do not
            exist for, or the checks every application makes.
    """
    kwargs.pop("layers", None)
    if kwargs:
        raise ValueError(f"Unknown argument(s): {(kwargs,)}")
    imagenet_utils.check_weights(weights, include_top, classes)
    sizes = (128, 160, 192, 224)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=_rows_for(input_shape, sizes),
                                                    min_size=32, data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must be 1.  "
                             f"Received depth_multiplier={depth_multiplier}")
        if alpha not in (0.25, 0.50, 0.75, 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` "
                             f"or `1.0` only.  Received alpha={alpha}")
    rows = _checked_rows(input_shape, weights, sizes)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2),
                      name="conv1")(img_input)
    x = layers.ReLU(6.0, name="conv1_relu")(layers.BatchNormalization(axis=_channel_axis(), name="conv1_bn")(x))
    for block_id, (filters, stride) in enumerate(_V1_BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, (stride, stride), block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(input_tensor, img_input, x, f"mobilenet_{alpha:0.2f}_{rows}")
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0"}.get(alpha, "2_5")
    file_name = f"mobilenet_{alpha_text}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, V1_WEIGHTS_PATH + file_name)


def _depthwise_conv_block(inputs: Any, pointwise_conv_filters: int, alpha: float, depth_multiplier: int = 1,
                          strides: tuple[int, int] = (1, 1), block_id: int = 1) -> Any:
    axis = _channel_axis()
    x = inputs
    if strides != (1, 1):
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(inputs)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == (1, 1) else "valid",
                               depth_multiplier=depth_multiplier, strides=strides, use_bias=False,
                               name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(pointwise_conv_filters * alpha), (1, 1), padding="same", use_bias=False,
                      strides=(1, 1), name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(name: str) -> Any:
    return layers.BatchNormalization(axis=_channel_axis(), epsilon=1e-3, momentum=0.999, name=name)


def MobileNetV2(input_shape: Any = None, alpha: float = 1.0, include_top: bool = True, weights: Any = "imagenet",
                input_tensor: Any = None, pooling: str | None = None, classes: int = 1000,
                classifier_activation: Any = "softmax", **kwargs: Any) -> Any:
    """Instantiates the MobileNetV2 architecture (inverted residual blocks).

    Args:
        alpha: width multiplier of every block's filters.
        input_shape, include_top, weights, input_tensor, pooling, classes,
            classifier_activation: as every Keras application takes them.

    Raises:
        ValueError: ImageNet weights with an ``alpha`` they do not exist for, or the
            checks every application makes.
    """
    kwargs.pop("layers", None)
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    imagenet_utils.check_weights(weights, include_top, classes)
    sizes = (96, 128, 160, 192, 224)
    default_size = _rows_for(input_shape, sizes)
    if input_shape is None and input_tensor is not None and backend.is_keras_tensor(input_tensor):
        shape = backend.int_shape(input_tensor)
        default_size = _rows_for(shape[1:], sizes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    if weights == "imagenet" and alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
        raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                         f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
    rows = _checked_rows(input_shape, weights, sizes)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same",
                      use_bias=False, name="Conv1")(img_input)
    x = layers.ReLU(6.0, name="Conv1_relu")(_bn("bn_Conv1")(x))
    for block_id, (filters, stride, expansion) in enumerate(_V2_BLOCKS):
        x = _inverted_res_block(x, expansion, stride, alpha, filters, block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.ReLU(6.0, name="out_relu")(_bn("Conv_1_bn")(x))
    if include_top:
        x = layers.GlobalAveragePooling2D()(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(input_tensor, img_input, x, f"mobilenetv2_{alpha:0.2f}_{rows}")
    file_name = (f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}"
                 f"{'' if include_top else '_no_top'}.h5")
    return imagenet_utils.load_weights(model, weights, file_name, V2_WEIGHTS_PATH + file_name)


def _inverted_res_block(inputs: Any, expansion: int, stride: int, alpha: float, filters: int,
                        block_id: int) -> Any:
    in_channels = backend.int_shape(inputs)[_channel_axis()]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False,
                          activation=None, name=prefix + "expand")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(_bn(prefix + "expand_BN")(x))
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=prefix + "depthwise")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(_bn(prefix + "depthwise_BN")(x))
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=prefix + "project")(x)
    x = _bn(prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """MobileNet's preprocessing: ``tf`` mode (pixels scaled to -1..1)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
