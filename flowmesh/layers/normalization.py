"""``tf.layers.BatchNormalization`` / ``batch_normalization`` (``training`` defaults to False;
with ``training=True`` or a boolean tensor the moving-average updates go to
``GraphKeys.UPDATE_OPS``, which the training op must depend on, as in TensorFlow 1.x)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.layers import normalization as keras_norm
from flowmesh.layers import base
from flowmesh.ops import init_ops


class BatchNormalization(keras_norm.BatchNormalization, base.Layer):
    """Batch normalization with TensorFlow 1.x's variable names (``batch_normalization/gamma``,
    ``beta``, ``moving_mean``, ``moving_variance``). As in TensorFlow 1.x, ``fused``
    (default True) uses the fused kernel only where it can, without raising."""

    _FUSED_IF_POSSIBLE = True

    def call(self, inputs: Any, training: Any = False) -> Any:
        return super().call(inputs, training=training)


def batch_normalization(inputs: Any, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True,
                        beta_initializer: Any = init_ops.zeros_initializer(),
                        gamma_initializer: Any = init_ops.ones_initializer(),
                        moving_mean_initializer: Any = init_ops.zeros_initializer(),
                        moving_variance_initializer: Any = init_ops.ones_initializer(),
                        beta_regularizer: Any = None, gamma_regularizer: Any = None,
                        beta_constraint: Any = None, gamma_constraint: Any = None,
                        training: Any = False, trainable: bool = True, name: str | None = None,
                        reuse: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                        renorm_momentum: float = 0.99, fused: bool | None = None,
                        virtual_batch_size: Any = None, adjustment: Any = None) -> Any:
    """Functional :class:`BatchNormalization`.

    Example:
        >>> h = tf.layers.batch_normalization(h, training=is_training)
        >>> with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        ...     train_op = optimizer.minimize(loss)
    """
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and adjustment are "
                                  "not supported by flowmesh; leave them at their defaults")
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                               beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint, gamma_constraint=gamma_constraint,
                               fused=fused, trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer(inputs, training=training)


BatchNorm = BatchNormalization
