"""RegNetX and RegNetY (002 ... 320) as tf-keras builds them: the same layers, weights and
names, so Keras's weight files load. Reference: Radosavovic et al., "Designing Network
Design Spaces" (CVPR 2020).

Where flowmesh differs: tf-keras adds the residual (``x + skip``) and scales by the
squeeze-and-excite gate (``tf.math.multiply``) with TensorFlow ops on Keras tensors, which
become ``TFOpLambda`` layers; here they are ``Add`` and ``Multiply`` layers (no weights, so
weight files are unaffected). As in tf-keras, the head's ``Dense`` has no activation
(``classifier_activation`` is only validated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/regnet/"

# name: (depths, widths, group width, block type); every default size is 224.
MODEL_CONFIGS: dict[str, tuple[tuple[int, ...], tuple[int, ...], int, str]] = {
    "x002": ((1, 1, 4, 7), (24, 56, 152, 368), 8, "X"),
    "x004": ((1, 2, 7, 12), (32, 64, 160, 384), 16, "X"),
    "x006": ((1, 3, 5, 7), (48, 96, 240, 528), 24, "X"),
    "x008": ((1, 3, 7, 5), (64, 128, 288, 672), 16, "X"),
    "x016": ((2, 4, 10, 2), (72, 168, 408, 912), 24, "X"),
    "x032": ((2, 6, 15, 2), (96, 192, 432, 1008), 48, "X"),
    "x040": ((2, 5, 14, 2), (80, 240, 560, 1360), 40, "X"),
    "x064": ((2, 4, 10, 1), (168, 392, 784, 1624), 56, "X"),
    "x080": ((2, 5, 15, 1), (80, 240, 720, 1920), 120, "X"),
    "x120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112, "X"),
    "x160": ((2, 6, 13, 1), (256, 512, 896, 2048), 128, "X"),
    "x320": ((2, 7, 13, 1), (336, 672, 1344, 2520), 168, "X"),
    "y002": ((1, 1, 4, 7), (24, 56, 152, 368), 8, "Y"),
    "y004": ((1, 3, 6, 6), (48, 104, 208, 440), 8, "Y"),
    "y006": ((1, 3, 7, 4), (48, 112, 256, 608), 16, "Y"),
    "y008": ((1, 3, 8, 2), (64, 128, 320, 768), 16, "Y"),
    "y016": ((2, 6, 17, 2), (48, 120, 336, 888), 24, "Y"),
    "y032": ((2, 5, 13, 1), (72, 216, 576, 1512), 24, "Y"),
    "y040": ((2, 6, 12, 2), (128, 192, 512, 1088), 64, "Y"),
    "y064": ((2, 7, 14, 2), (144, 288, 576, 1296), 72, "Y"),
    "y080": ((2, 4, 10, 1), (168, 448, 896, 2016), 56, "Y"),
    "y120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112, "Y"),
    "y160": ((2, 4, 11, 1), (224, 448, 1232, 3024), 112, "Y"),
    "y320": ((2, 5, 12, 1), (232, 696, 1392, 3712), 232, "Y"),
}


def _conv(filters: int, kernel: int, name: str, **kwargs: Any) -> Any:
    return layers.Conv2D(filters, (kernel, kernel), use_bias=False, kernel_initializer="he_normal",
                         name=name, **kwargs)


def _bn(name: str) -> Any:
    return layers.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name)


def squeeze_and_excite(inputs: Any, filters_in: int, se_filters: int, name: str) -> Any:
    """Global average pooling, a squeezing and an exciting 1x1 convolution, the gate times
    the input (Hu et al., "Squeeze-and-Excitation Networks")."""
    x = layers.GlobalAveragePooling2D(name=name + "_squeeze_and_excite_gap", keepdims=True)(inputs)
    x = layers.Conv2D(se_filters, (1, 1), activation="relu", kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_squeeze")(x)
    x = layers.Conv2D(filters_in, (1, 1), activation="sigmoid", kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_excite")(x)
    return layers.Multiply(name=name + "_squeeze_and_excite_multiply")([x, inputs])


def block(inputs: Any, block_type: str, filters_in: int, filters_out: int, group_width: int, stride: int = 1,
          squeeze_excite_ratio: float = 0.25, name: str = "block") -> Any:
    """RegNet's X block (1x1, grouped 3x3, 1x1 convolutions with a residual) or Y block (X
    with squeeze-and-excite after the grouped convolution).

    Raises:
        ValueError: ``filters_in != filters_out`` with stride 1.
    """
    if filters_in != filters_out and stride == 1:
        raise ValueError(f"Input filters({filters_in}) and output filters({filters_out}) are not equal for "
                         f"stride {stride}. Input and output filters must be equal for stride={stride}.")
    if stride != 1:
        skip = _bn(name + "_skip_bn")(_conv(filters_out, 1, name + "_skip_1x1", strides=stride)(inputs))
    else:
        skip = inputs
    x = _bn(name + "_conv_1x1_1_bn")(_conv(filters_out, 1, name + "_conv_1x1_1")(inputs))
    x = layers.ReLU(name=name + "_conv_1x1_1_relu")(x)
    x = _conv(filters_out, 3, name + "_conv_3x3", strides=stride, groups=filters_out // group_width,
              padding="same")(x)
    x = layers.ReLU(name=name + "_conv_3x3_relu")(_bn(name + "_conv_3x3_bn")(x))
    if block_type == "Y":
        x = squeeze_and_excite(x, filters_out, int(filters_in * squeeze_excite_ratio), name)
    x = _bn(name + "_conv_1x1_2_bn")(_conv(filters_out, 1, name + "_conv_1x1_2")(x))
    return layers.ReLU(name=name + "_exit_relu")(layers.Add(name=name + "_add")([x, skip]))


def RegNet(depths: Any, widths: Any, group_width: int, block_type: str, default_size: int,
           model_name: str = "regnet", include_preprocessing: bool = True, include_top: bool = True,
           weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
           pooling: str | None = None, classes: int = 1000, classifier_activation: Any = "softmax") -> Any:
    """A RegNet of four stages (``depths`` blocks of ``widths`` filters each).

    Args:
        include_preprocessing: start with ``Rescaling(1/255)`` (the model takes 0..255 pixels).
        block_type: ``"X"`` or ``"Y"`` (tf-keras's ``"Z"`` blocks do not build there either).

    Raises:
        ValueError: another ``block_type``, or the checks every application makes.
    """
    if block_type not in ("X", "Y"):
        raise ValueError(f"Block type `{block_type}` not recognized. block_type must be one of (`X`, `Y`).")
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    inputs = img_input if input_tensor is None else imagenet_utils.get_source_inputs(input_tensor)[0]
    x = inputs
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 255.0, name=model_name + "_prestem_rescaling")(x)
    x = _bn(model_name + "_stem_bn")(_conv(32, 3, model_name + "_stem_conv", strides=2, padding="same")(x))
    x = layers.ReLU(name=model_name + "_stem_relu")(x)
    in_channels = 32
    for stage in range(4):
        prefix = f"{model_name}_Stage_{stage}_{block_type}Block"
        x = block(x, block_type, in_channels, widths[stage], group_width, stride=2, name=f"{prefix}_0")
        for i in range(1, depths[stage]):
            x = block(x, block_type, widths[stage], widths[stage], group_width, name=f"{prefix}_{i}")
        in_channels = widths[stage]
    if include_top:
        head = str(backend.get_uid("head"))
        x = layers.GlobalAveragePooling2D(name=head + "_head_gap")(x)
        x = layers.Dense(classes, name=head + "head_dense")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(None, inputs, x, model_name)
    file_name = f"{model_name}{'.h5' if include_top else '_notop.h5'}"
    return imagenet_utils.load_weights(model, weights, file_name, BASE_WEIGHTS_PATH + file_name)


def _variant(key: str) -> Callable[..., Any]:
    depths, widths, group_width, block_type = MODEL_CONFIGS[key]
    name = f"RegNet{key.upper()}"

    def build(model_name: str = f"regnet{key}", include_top: bool = True, include_preprocessing: bool = True,
              weights: Any = "imagenet", input_tensor: Any = None, input_shape: Any = None,
              pooling: str | None = None, classes: int = 1000, classifier_activation: Any = "softmax") -> Any:
        return RegNet(depths, widths, group_width, block_type, 224, model_name=model_name,
                      include_preprocessing=include_preprocessing, include_top=include_top, weights=weights,
                      input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} architecture (stages of {depths} {block_type} blocks, widths "
                     f"{widths}, group width {group_width}).\n\nArgs: model_name, include_top, "
                     "include_preprocessing, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A `keras.Model`.")
    return build


RegNetX002 = _variant("x002")
RegNetX004 = _variant("x004")
RegNetX006 = _variant("x006")
RegNetX008 = _variant("x008")
RegNetX016 = _variant("x016")
RegNetX032 = _variant("x032")
RegNetX040 = _variant("x040")
RegNetX064 = _variant("x064")
RegNetX080 = _variant("x080")
RegNetX120 = _variant("x120")
RegNetX160 = _variant("x160")
RegNetX320 = _variant("x320")
RegNetY002 = _variant("y002")
RegNetY004 = _variant("y004")
RegNetY006 = _variant("y006")
RegNetY008 = _variant("y008")
RegNetY016 = _variant("y016")
RegNetY032 = _variant("y032")
RegNetY040 = _variant("y040")
RegNetY064 = _variant("y064")
RegNetY080 = _variant("y080")
RegNetY120 = _variant("y120")
RegNetY160 = _variant("y160")
RegNetY320 = _variant("y320")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Returns ``x`` unchanged: RegNet models rescale their inputs themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
