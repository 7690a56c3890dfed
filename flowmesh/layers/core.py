"""``tf.layers.Dense``/``dense``, ``Dropout``/``dropout``, ``Flatten``/``flatten``."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.layers import core as keras_core
from flowmesh.layers import base
from flowmesh.ops import init_ops


class Dense(keras_core.Dense, base.Layer):
    """Densely-connected layer: ``activation(inputs @ kernel + bias)`` (``kernel_initializer``
    None means the variable scope's, else glorot_uniform)."""

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None,
                 **kwargs: Any):
        super().__init__(units=units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name, **kwargs)


def dense(inputs: Any, units: int, activation: Any = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
          kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
          kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
          name: str | None = None, reuse: Any = None) -> Any:
    """Functional :class:`Dense`: variables ``<name or dense[_N]>/kernel`` and ``/bias``.

    Example:
        >>> h = tf.layers.dense(x, 256, activation=tf.nn.relu)          # dense/kernel
        >>> y = tf.layers.dense(h, 10, name="logits", reuse=tf.AUTO_REUSE)
    """
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer(inputs)


class Dropout(keras_core.Dropout, base.Layer):
    """Dropout that is active only with ``training=True`` (default False)."""

    def __init__(self, rate: float = 0.5, noise_shape: Any = None, seed: int | None = None,
                 name: str | None = None, **kwargs: Any):
        super().__init__(rate=rate, noise_shape=noise_shape, seed=seed, name=name, **kwargs)

    def call(self, inputs: Any, training: Any = False) -> Any:
        return super().call(inputs, training=training)


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: int | None = None,
            training: Any = False, name: str | None = None) -> Any:
    """Functional :class:`Dropout`; ``training`` may be a Python bool or a boolean tensor."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(keras_core.Flatten, base.Layer):
    """Flattens all but the batch dimension."""


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Any:
    """Functional :class:`Flatten`."""
    return Flatten(name=name, data_format=data_format)(inputs)
