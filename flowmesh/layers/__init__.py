"""``tf.layers``: TensorFlow 1.x layers (functions and classes) named by variable scopes.

Built on :mod:`flowmesh.keras` layers with :class:`flowmesh.layers.base.Layer`'s naming:
``tf.layers.dense(x, 10)`` creates ``dense/kernel`` and ``dense/bias`` with
``tf.get_variable`` (so ``reuse``, ``AUTO_REUSE``, custom getters and TensorFlow
checkpoints work by name).
"""

from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.layers.base import Layer
from flowmesh.layers.convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Convolution1D,
    Convolution2D,
    Convolution2DTranspose,
    Deconvolution2D,
    conv1d,
    conv2d,
    conv2d_transpose,
    convolution1d,
    convolution2d,
    convolution2d_transpose,
)
from flowmesh.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from flowmesh.layers.normalization import BatchNormalization, batch_normalization
from flowmesh.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    MaxPooling1D,
    MaxPooling2D,
    average_pooling1d,
    average_pooling2d,
    max_pooling1d,
    max_pooling2d,
)

__all__ = [
    "AveragePooling1D", "AveragePooling2D", "BatchNormalization", "Conv1D", "Conv2D", "Conv2DTranspose",
    "Convolution1D", "Convolution2D", "Convolution2DTranspose", "Deconvolution2D", "Dense", "Dropout",
    "Flatten", "InputSpec", "Layer", "MaxPooling1D", "MaxPooling2D", "average_pooling1d",
    "average_pooling2d", "batch_normalization", "conv1d", "conv2d", "conv2d_transpose", "convolution1d",
    "convolution2d", "convolution2d_transpose", "dense", "dropout", "flatten", "max_pooling1d",
    "max_pooling2d",
]
