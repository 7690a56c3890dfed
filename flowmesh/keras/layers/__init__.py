# ruff: noqa: F401 - re-exports
"""``tf.keras.layers``."""

from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_layer import Input, InputLayer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import Conv1D, Conv2D, Conv2DTranspose
from flowmesh.keras.layers.core import Activation, Dense, Dropout, Flatten, Lambda, Reshape
from flowmesh.keras.layers.embedding import Embedding
from flowmesh.keras.layers.masking import Masking
from flowmesh.keras.layers.merge import (
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    maximum,
    minimum,
    multiply,
    subtract,
)
from flowmesh.keras.layers.normalization import BatchNormalization, LayerNormalization
from flowmesh.keras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    MaxPooling1D,
    MaxPooling2D,
)
from flowmesh.keras.layers.recurrent import GRU, LSTM, RNN, Bidirectional, SimpleRNN
from flowmesh.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from flowmesh.keras.layers.reshaping import TimeDistributed, UpSampling2D

Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
