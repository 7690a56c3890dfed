"""``tf.layers`` pooling: ``MaxPooling1D/2D``, ``AveragePooling1D/2D`` and their functions
(``strides`` is required, as in TensorFlow 1.x)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.layers import pooling as keras_pooling
from flowmesh.layers import base


class MaxPooling1D(keras_pooling.MaxPooling1D, base.Layer):
    pass


class MaxPooling2D(keras_pooling.MaxPooling2D, base.Layer):
    pass


class AveragePooling1D(keras_pooling.AveragePooling1D, base.Layer):
    pass


class AveragePooling2D(keras_pooling.AveragePooling2D, base.Layer):
    pass


def _pool(cls: type, inputs: Any, pool_size: Any, strides: Any, padding: str, data_format: str,
          name: str | None) -> Any:
    return cls(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
               name=name)(inputs)


def max_pooling1d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Any:
    """Max pooling over ``[batch, steps, channels]``."""
    return _pool(MaxPooling1D, inputs, pool_size, strides, padding, data_format, name)


def max_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Any:
    """Max pooling over ``[batch, rows, cols, channels]``."""
    return _pool(MaxPooling2D, inputs, pool_size, strides, padding, data_format, name)


def average_pooling1d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Any:
    """Average pooling over ``[batch, steps, channels]``."""
    return _pool(AveragePooling1D, inputs, pool_size, strides, padding, data_format, name)


def average_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Any:
    """Average pooling over ``[batch, rows, cols, channels]``."""
    return _pool(AveragePooling2D, inputs, pool_size, strides, padding, data_format, name)


MaxPool1D, MaxPool2D, AveragePool1D, AveragePool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
