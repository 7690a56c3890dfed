"""ResNet (v1: ``ResNet50/101/152``) and ResNetV2 (``ResNet50V2/101V2/152V2``) as tf-keras
builds them: the same layers, names and order, so Keras's weight files load.

Reference: He et al., "Deep Residual Learning for Image Recognition" (CVPR 2015) and
"Identity Mappings in Deep Residual Networks" (ECCV 2016).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"


def _bn_axis() -> int:
    return 3 if backend.image_data_format() == "channels_last" else 1


def _bn(name: str) -> Any:
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=1.001e-5, name=name)


def ResNet(stack_fn: Callable[[Any], Any], preact: bool, use_bias: bool, model_name: str = "resnet",
           include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
           input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
           classifier_activation: Any = "softmax", **kwargs: Any) -> Any:
    """A ResNet whose residual stages ``stack_fn`` builds (tf-keras's ``resnet.ResNet``).

    Args:
        stack_fn: the stages, tensor -> tensor.
        preact: ResNetV2's pre-activation (batch norm + ReLU after the stages, none after
            the stem).
        use_bias: whether the stem convolution has a bias.
        model_name: the model's name (and the weight file's).
        include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation: as every Keras application takes them.

    Raises:
        ValueError: an unknown keyword argument, or a ``weights``/``input_shape`` the
            application refuses.
    """
    kwargs.pop("layers", None)
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = layers.Activation("relu", name="conv1_relu")(_bn("conv1_bn")(x))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = layers.Activation("relu", name="post_relu")(_bn("post_bn")(x))
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling, ("avg_pool", "max_pool"))
    model = imagenet_utils.make_model(input_tensor, img_input, x, model_name)
    suffix = "" if include_top else "_notop"
    file_name = f"{model_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def block1(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = True,
           name: str | None = None) -> Any:
    """A bottleneck residual block (ResNet v1)."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = _bn(name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(_bn(name + "_1_bn")(x))
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=name + "_2_conv")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(_bn(name + "_2_bn")(x))
    x = _bn(name + "_3_bn")(layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x))
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def stack1(x: Any, filters: int, blocks: int, stride1: int = 2, name: str | None = None) -> Any:
    """``blocks`` v1 blocks, the first with a projection shortcut and stride ``stride1``."""
    x = block1(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = block1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def block2(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = False,
           name: str | None = None) -> Any:
    """A pre-activation bottleneck residual block (ResNet v2)."""
    preact = layers.Activation("relu", name=name + "_preact_relu")(_bn(name + "_preact_bn")(x))
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=name + "_1_conv")(preact)
    x = layers.Activation("relu", name=name + "_1_relu")(_bn(name + "_1_bn")(x))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=name + "_2_conv")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(_bn(name + "_2_bn")(x))
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return layers.Add(name=name + "_out")([shortcut, x])


def stack2(x: Any, filters: int, blocks: int, stride1: int = 2, name: str | None = None) -> Any:
    """``blocks`` v2 blocks; the last one strides by ``stride1``."""
    x = block2(x, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = block2(x, filters, name=f"{name}_block{i}")
    return block2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _stages(stack: Callable[..., Any], depths: tuple[int, int, int, int], v2: bool) -> Callable[[Any], Any]:
    def stack_fn(x: Any) -> Any:
        for i, (filters, blocks) in enumerate(zip((64, 128, 256, 512), depths)):
            if v2:
                x = stack(x, filters, blocks, stride1=1 if i == 3 else 2, name=f"conv{i + 2}")
            else:
                x = stack(x, filters, blocks, stride1=1 if i == 0 else 2, name=f"conv{i + 2}")
        return x

    return stack_fn


def _v1(name: str, depths: tuple[int, int, int, int]) -> Callable[..., Any]:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: str | None = None, classes: int = 1000, **kwargs: Any) -> Any:
        return ResNet(_stages(stack1, depths, False), False, True, name.lower(), include_top, weights,
                      input_tensor, input_shape, pooling, classes, **kwargs)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} architecture (stages of {depths} bottleneck blocks).\n\n"
                     "Args: include_top, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A "
                     "`keras.Model`.")
    return build


def _v2(name: str, depths: tuple[int, int, int, int]) -> Callable[..., Any]:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
              classifier_activation: Any = "softmax") -> Any:
        return ResNet(_stages(stack2, depths, True), True, True, name.lower(), include_top, weights,
                      input_tensor, input_shape, pooling, classes, classifier_activation=classifier_activation)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} architecture (pre-activation stages of {depths} blocks).\n\n"
                     "Args: include_top, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A "
                     "`keras.Model`.")
    return build


ResNet50 = _v1("ResNet50", (3, 4, 6, 3))
ResNet101 = _v1("ResNet101", (3, 4, 23, 3))
ResNet152 = _v1("ResNet152", (3, 8, 36, 3))
ResNet50V2 = _v2("ResNet50V2", (3, 4, 6, 3))
ResNet101V2 = _v2("ResNet101V2", (3, 4, 23, 3))
ResNet152V2 = _v2("ResNet152V2", (3, 8, 36, 3))


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """ResNet v1's preprocessing: ``caffe`` mode (BGR, ImageNet means subtracted)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def preprocess_input_v2(x: Any, data_format: str | None = None) -> Any:
    """ResNetV2's preprocessing: ``tf`` mode (pixels scaled to -1..1)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
