# ruff: noqa: F401 - re-exports
"""``tf.keras.layers``."""

from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_layer import Input, InputLayer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.activation import ELU, LeakyReLU, PReLU, ReLU, Softmax, ThresholdedReLU
from flowmesh.keras.layers.attention import AdditiveAttention, Attention
from flowmesh.keras.layers.convolutional import Conv1D, Conv2D, Conv2DTranspose, Conv3D
from flowmesh.keras.layers.convolutional_transpose import Conv1DTranspose, Conv3DTranspose
from flowmesh.keras.layers.core import Activation, Dense, Dropout, Flatten, Identity, Lambda, Reshape
from flowmesh.keras.layers.depthwise import DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D
from flowmesh.keras.layers.einsum_dense import EinsumDense
from flowmesh.keras.layers.embedding import Embedding
from flowmesh.keras.layers.locally_connected import LocallyConnected1D, LocallyConnected2D
from flowmesh.keras.layers.masking import Masking
from flowmesh.keras.layers.merge import (
    Add,
    Average,
    Concatenate,
    Dot,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from flowmesh.keras.layers.multi_head_attention import MultiHeadAttention
from flowmesh.keras.layers.noise import (
    ActivityRegularization,
    AlphaDropout,
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)
from flowmesh.keras.layers.normalization import (
    BatchNormalization,
    GroupNormalization,
    LayerNormalization,
    UnitNormalization,
)
from flowmesh.keras.layers.padding import (
    Cropping1D,
    Cropping2D,
    Cropping3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
)
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
from flowmesh.keras.layers.preprocessing import (
    CategoryEncoding,
    CenterCrop,
    Discretization,
    Hashing,
    Normalization,
    Rescaling,
    Resizing,
)
from flowmesh.keras.layers.random_image import (
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomHeight,
    RandomWidth,
)
from flowmesh.keras.layers.random_warp import RandomRotation, RandomTranslation, RandomZoom
from flowmesh.keras.layers.recurrent import GRU, LSTM, RNN, Bidirectional, SimpleRNN
from flowmesh.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from flowmesh.keras.layers.recurrent_stacked import AbstractRNNCell, StackedRNNCells
from flowmesh.keras.layers.reshaping import (
    Permute,
    RepeatVector,
    TimeDistributed,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    Wrapper,
)

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
