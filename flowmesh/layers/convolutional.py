"""``tf.layers.Conv1D/conv1d``, ``Conv2D/conv2d``, ``Conv2DTranspose/conv2d_transpose``."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.layers import convolutional as keras_conv
from flowmesh.layers import base
from flowmesh.ops import init_ops


def _legacy_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs.setdefault("kernel_initializer", None)
    kwargs.setdefault("bias_initializer", init_ops.zeros_initializer())
    return kwargs


class Conv1D(keras_conv.Conv1D, base.Layer):
    """1-D convolution layer (variables ``conv1d/kernel``, ``conv1d/bias``)."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid", **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **_legacy_kwargs(kwargs))


class Conv2D(keras_conv.Conv2D, base.Layer):
    """2-D convolution layer (variables ``conv2d/kernel``, ``conv2d/bias``)."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **_legacy_kwargs(kwargs))


class Conv2DTranspose(keras_conv.Conv2DTranspose, base.Layer):
    """Transposed 2-D convolution layer (``conv2d_transpose/kernel`` is [kh, kw, filters, in])."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **_legacy_kwargs(kwargs))


def _functional(cls: type, inputs: Any, filters: int, kernel_size: Any, name: str | None, reuse: Any,
                **kwargs: Any) -> Any:
    return cls(filters, kernel_size, name=name, _scope=name, _reuse=reuse, **kwargs)(inputs)


def conv1d(inputs: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = 1, activation: Any = None,
           use_bias: bool = True, kernel_initializer: Any = None,
           bias_initializer: Any = init_ops.zeros_initializer(), kernel_regularizer: Any = None,
           bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
           bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
           reuse: Any = None) -> Any:
    """Functional :class:`Conv1D` over ``[batch, steps, channels]``."""
    return _functional(Conv1D, inputs, filters, kernel_size, name, reuse, strides=strides, padding=padding,
                       data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                       use_bias=use_bias, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       trainable=trainable)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1), activation: Any = None,
           use_bias: bool = True, kernel_initializer: Any = None,
           bias_initializer: Any = init_ops.zeros_initializer(), kernel_regularizer: Any = None,
           bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
           bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
           reuse: Any = None) -> Any:
    """Functional :class:`Conv2D` (variables ``<name or conv2d[_N]>/kernel``, ``/bias``)."""
    return _functional(Conv2D, inputs, filters, kernel_size, name, reuse, strides=strides, padding=padding,
                       data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                       use_bias=use_bias, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       trainable=trainable)


def conv2d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1),
                     padding: str = "valid", data_format: str = "channels_last", activation: Any = None,
                     use_bias: bool = True, kernel_initializer: Any = None,
                     bias_initializer: Any = init_ops.zeros_initializer(), kernel_regularizer: Any = None,
                     bias_regularizer: Any = None, activity_regularizer: Any = None,
                     kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                     name: str | None = None, reuse: Any = None) -> Any:
    """Functional :class:`Conv2DTranspose`."""
    return _functional(Conv2DTranspose, inputs, filters, kernel_size, name, reuse, strides=strides,
                       padding=padding, data_format=data_format, activation=activation,
                       use_bias=use_bias, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                       trainable=trainable)


Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
Deconvolution2D, convolution1d, convolution2d = Conv2DTranspose, conv1d, conv2d
convolution2d_transpose = conv2d_transpose
