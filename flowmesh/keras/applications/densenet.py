"""DenseNet121/169/201 as tf-keras builds them (same layers and names, so Keras's weight
files load). Reference: Huang et al., "Densely Connected Convolutional Networks" (CVPR
2017)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
_NAMES = {(6, 12, 24, 16): "densenet121", (6, 12, 32, 32): "densenet169", (6, 12, 48, 32): "densenet201"}


def _bn_axis() -> int:
    return 3 if backend.image_data_format() == "channels_last" else 1


def _bn(name: str) -> Any:
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=1.001e-5, name=name)


def dense_block(x: Any, blocks: int, name: str) -> Any:
    """``blocks`` convolution blocks, each concatenating 32 new channels."""
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x: Any, reduction: float, name: str) -> Any:
    """Batch norm, ReLU, a 1x1 convolution to ``reduction`` of the channels, 2x2 average pooling."""
    x = layers.Activation("relu", name=name + "_relu")(_bn(name + "_bn")(x))
    x = layers.Conv2D(int(backend.int_shape(x)[_bn_axis()] * reduction), 1, use_bias=False, name=name + "_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=name + "_pool")(x)


def conv_block(x: Any, growth_rate: int, name: str) -> Any:
    """A bottleneck (1x1, then 3x3 to ``growth_rate`` channels) concatenated to its input."""
    x1 = layers.Activation("relu", name=name + "_0_relu")(_bn(name + "_0_bn")(x))
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=name + "_1_conv")(x1)
    x1 = layers.Activation("relu", name=name + "_1_relu")(_bn(name + "_1_bn")(x1))
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=name + "_2_conv")(x1)
    return layers.Concatenate(axis=_bn_axis(), name=name + "_concat")([x, x1])


def DenseNet(blocks: Any, include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
             input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
             classifier_activation: Any = "softmax") -> Any:
    """A DenseNet of four dense blocks of ``blocks`` convolution blocks."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1/conv")(x)
    x = layers.Activation("relu", name="conv1/relu")(_bn("conv1/bn")(x))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for i, count in enumerate(blocks):
        x = dense_block(x, count, name=f"conv{i + 2}")
        if i < 3:
            x = transition_block(x, 0.5, name=f"pool{i + 2}")
    x = layers.Activation("relu", name="relu")(_bn("bn")(x))
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling, ("avg_pool", "max_pool"))
    name = _NAMES.get(tuple(blocks), "densenet")
    model = imagenet_utils.make_model(input_tensor, img_input, x, name)
    file_name = f"{name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def _variant(name: str, blocks: tuple[int, int, int, int]) -> Callable[..., Any]:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
              classifier_activation: Any = "softmax") -> Any:
        return DenseNet(list(blocks), include_top, weights, input_tensor, input_shape, pooling, classes,
                        classifier_activation)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} architecture (dense blocks of {blocks} layers).\n\n"
                     "Args: include_top, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A "
                     "`keras.Model`.")
    return build


DenseNet121 = _variant("DenseNet121", (6, 12, 24, 16))
DenseNet169 = _variant("DenseNet169", (6, 12, 32, 32))
DenseNet201 = _variant("DenseNet201", (6, 12, 48, 32))


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """DenseNet's preprocessing: ``torch`` mode (0..1, then ImageNet means and deviations)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


decode_predictions = imagenet_utils.decode_predictions
