"""EfficientNetB0 ... B7 as tf-keras builds them: the same layers, weights and names, so
Keras's weight files load. Reference: Tan and Le, "EfficientNet: Rethinking Model Scaling
for Convolutional Neural Networks" (ICML 2019).

The model takes 0..255 pixels (``Rescaling`` and ``Normalization`` come first);
``preprocess_input`` is the identity. With ``weights="imagenet"`` tf-keras rescales by the
ImageNet standard deviations with a TensorFlow op; here that is a ``Lambda`` layer.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]
# (kernel size, repeats, filters in, filters out, expand ratio, strides) of the 7 stages;
# every block has an identity skip and squeeze-and-excite ratio 0.25.
_STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))
DEFAULT_BLOCKS_ARGS = [
    {"kernel_size": k, "repeats": r, "filters_in": fi, "filters_out": fo, "expand_ratio": e, "id_skip": True,
     "strides": s, "se_ratio": 0.25} for k, r, fi, fo, e, s in _STAGES]
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}


def _bn_axis() -> int:
    return 3 if backend.image_data_format() == "channels_last" else 1


def EfficientNet(width_coefficient: float, depth_coefficient: float, default_size: int, dropout_rate: float = 0.2,
                 drop_connect_rate: float = 0.2, depth_divisor: int = 8, activation: Any = "swish",
                 blocks_args: Any = "default", model_name: str = "efficientnet", include_top: bool = True,
                 weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
                 pooling: str | None = None, classes: int = 1000, classifier_activation: Any = "softmax") -> Any:
    """An EfficientNet scaled by ``width_coefficient`` (filters) and ``depth_coefficient``
    (blocks per stage); ``drop_connect_rate`` grows linearly over the blocks."""
    blocks_args = DEFAULT_BLOCKS_ARGS if blocks_args == "default" else blocks_args
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    bn_axis = _bn_axis()

    def round_filters(filters: float) -> int:
        filters *= width_coefficient
        new_filters = max(depth_divisor, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor)
        return int(new_filters + depth_divisor if new_filters < 0.9 * filters else new_filters)

    def round_repeats(repeats: int) -> int:
        return int(math.ceil(depth_coefficient * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=bn_axis)(x)
    if weights == "imagenet":
        factors = [1.0 / math.sqrt(stddev) for stddev in IMAGENET_STDDEV_RGB]
        shape = [1, 3, 1, 1] if bn_axis == 1 else [1, 1, 1, 3]
        x = layers.Lambda(lambda t: t * backend.reshape(backend.constant(factors), shape), name="stddev_scale")(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    b = 0
    blocks = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    for i, args in enumerate(blocks_args):
        args["filters_in"] = round_filters(args["filters_in"])
        args["filters_out"] = round_filters(args["filters_out"])
        for j in range(round_repeats(args.pop("repeats"))):
            if j > 0:
                args["strides"], args["filters_in"] = 1, args["filters_out"]
            x = block(x, activation, drop_connect_rate * b / blocks, name=f"block{i + 1}{chr(j + 97)}_", **args)
            b += 1
    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="top_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                         name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling, ("avg_pool", "max_pool"))
    model = imagenet_utils.make_model(input_tensor, img_input, x, model_name)
    file_name = model_name + (".h5" if include_top else "_notop.h5")
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def block(inputs: Any, activation: Any = "swish", drop_rate: float = 0.0, name: str = "", filters_in: int = 32,
          filters_out: int = 16, kernel_size: int = 3, strides: int = 1, expand_ratio: int = 1,
          se_ratio: float = 0.0, id_skip: bool = True) -> Any:
    """A mobile inverted bottleneck block: expansion, depthwise convolution,
    squeeze-and-excite, projection, and a residual with drop-connect when the shape is kept."""
    bn_axis = _bn_axis()
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                          name=name + "expand_conv")(inputs)
        x = layers.BatchNormalization(axis=bn_axis, name=name + "expand_bn")(x)
        x = layers.Activation(activation, name=name + "expand_activation")(x)
    conv_pad = "same"
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=name + "dwconv_pad")(x)
        conv_pad = "valid"
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding=conv_pad, use_bias=False,
                               depthwise_initializer=CONV_KERNEL_INITIALIZER, name=name + "dwconv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name=name + "bn")(x)
    x = layers.Activation(activation, name=name + "activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
        se = layers.Reshape((filters, 1, 1) if bn_axis == 1 else (1, 1, filters), name=name + "se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=name + "se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                           kernel_initializer=CONV_KERNEL_INITIALIZER, name=name + "se_expand")(se)
        x = layers.multiply([x, se], name=name + "se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=CONV_KERNEL_INITIALIZER,
                      name=name + "project_conv")(x)
    x = layers.BatchNormalization(axis=bn_axis, name=name + "project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = layers.add([x, inputs], name=name + "add")
    return x


def _variant(index: int, width: float, depth: float, size: int, dropout: float) -> Callable[..., Any]:
    name = f"EfficientNetB{index}"

    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
              classifier_activation: Any = "softmax", **kwargs: Any) -> Any:
        return EfficientNet(width, depth, size, dropout, model_name=name.lower(), include_top=include_top,
                            weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                            classes=classes, classifier_activation=classifier_activation, **kwargs)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} architecture (width x{width}, depth x{depth}, {size}x{size} "
                     "images).\n\nArgs: include_top, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A `keras.Model`.")
    return build


EfficientNetB0 = _variant(0, 1.0, 1.0, 224, 0.2)
EfficientNetB1 = _variant(1, 1.0, 1.1, 240, 0.2)
EfficientNetB2 = _variant(2, 1.1, 1.2, 260, 0.3)
EfficientNetB3 = _variant(3, 1.2, 1.4, 300, 0.3)
EfficientNetB4 = _variant(4, 1.4, 1.8, 380, 0.4)
EfficientNetB5 = _variant(5, 1.6, 2.2, 456, 0.4)
EfficientNetB6 = _variant(6, 1.8, 2.6, 528, 0.5)
EfficientNetB7 = _variant(7, 2.0, 3.1, 600, 0.5)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Returns ``x`` unchanged: EfficientNet models rescale their inputs themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
