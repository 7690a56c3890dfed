"""VGG16 and VGG19 as tf-keras builds them (same layers and names, so Keras's weight files
load). Reference: Simonyan and Zisserman, "Very Deep Convolutional Networks for
Large-Scale Image Recognition" (ICLR 2015)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.keras import backend, layers
from flowmesh.keras.applications import imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/"


def VGG(convs_per_block: tuple[int, ...], model_name: str, include_top: bool = True, weights: Any = "imagenet",
        input_tensor: Any = None, input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
        classifier_activation: Any = "softmax") -> Any:
    """Five blocks of 3x3 convolutions (64, 128, 256, 512, 512 filters) and 2x2 max pooling,
    then two 4096-unit dense layers and the classifier."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.image_input(input_tensor, input_shape)
    x = img_input
    for block, (filters, convs) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling)
    model = imagenet_utils.make_model(input_tensor, img_input, x, model_name)
    file_name = f"{model_name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_utils.load_weights(model, weights, file_name, f"{BASE_WEIGHTS_PATH}{model_name}/{file_name}")


def _variant(name: str, convs: tuple[int, ...]) -> Callable[..., Any]:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: str | None = None, classes: int = 1000,
              classifier_activation: Any = "softmax") -> Any:
        return VGG(convs, name.lower(), include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"Instantiates the {name} model ({sum(convs)} convolutions in 5 blocks).\n\n"
                     "Args: include_top, weights (None, 'imagenet' or a weight file), input_tensor, "
                     "input_shape, pooling, classes, classifier_activation.\n\nReturns:\n    A "
                     "`keras.Model`.")
    return build


VGG16 = _variant("VGG16", (2, 2, 3, 3, 3))
VGG19 = _variant("VGG19", (2, 2, 4, 4, 4))


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """VGG's preprocessing: ``caffe`` mode (BGR, ImageNet means subtracted)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
