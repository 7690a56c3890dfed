# ruff: noqa: F401 - re-exports
"""``tf.keras.layers``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.layers.convolutional import Conv1D, Conv2D, Conv2DTranspose, Conv3D
from flowmesh.keras.layers.convolutional_transpose import Conv1DTranspose, Conv3DTranspose
from flowmesh.keras.layers.depthwise import SeparableConv1D, SeparableConv2D
from flowmesh.keras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)

_fill_namespace(globals(), "keras.layers")

Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose, Convolution3DTranspose = Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D


def serialize(layer: Layer) -> dict:
    """``{"class_name", "config"}`` of a layer (tf-keras's layout)."""
    from flowmesh.keras.saving.model_config import layer_config

    return layer_config(layer)


def deserialize(config: dict, custom_objects: dict | None = None) -> Layer:
    """A layer from :func:`serialize`'s dict (or tf-keras's)."""
    from flowmesh.keras.saving.model_config import layer_from_config

    return layer_from_config(config, custom_objects)
