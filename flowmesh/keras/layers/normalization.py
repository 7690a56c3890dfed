"""``BatchNormalization`` and ``LayerNormalization``.

Batch normalization follows TensorFlow's Keras: 4-D and 5-D inputs normalized over the
channel axis use the fused kernel (whose training variance, Bessel-corrected, feeds the moving
variance); other inputs use ``tf.nn.moments`` (biased variance). While training the
moving statistics move by ``moving -= (moving - batch) * (1 - momentum)``
(``AssignMovingAvg`` ops in ``layer.updates``); with a tensor ``training`` the momentum
is 1 (no change) when it is False.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.keras import backend, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.ops import array_ops, math_ops, nn_norm_ops, reduction_ops
from flowmesh.ops.constant_op import constant


class BatchNormalization(Layer):
    """Normalizes each channel (``axis``) with batch statistics while training and moving
    statistics otherwise. Weights: ``gamma``, ``beta`` (trainable), ``moving_mean``,
    ``moving_variance`` (not trainable)."""

    _FUSED_IF_POSSIBLE = False

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, fused: bool | None = None, **kwargs: Any):
        kwargs.pop("renorm", None)
        kwargs.pop("virtual_batch_size", None)
        super().__init__(**kwargs)
        self.axis = axis
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.fused = fused
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape)
        rank = shape.rank
        if rank is None:
            raise ValueError(f"Input has undefined rank (layer {self.name}).")
        axes = [self.axis] if isinstance(self.axis, int) else list(self.axis)
        axes = [a % rank for a in axes]
        if len(axes) != 1:
            raise ValueError(f"Layer {self.name}: only one normalization axis is supported, got {self.axis}")
        self._axis = axes[0]
        channels = shape[self._axis]
        if channels is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the "
                             f"layer received an input with shape {shape}.")
        self._fused = self._choose_fused(shape)
        self.input_spec = InputSpec(ndim=rank, axes={self._axis: channels})
        param = [channels]
        self.gamma = self.add_weight("gamma", param, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", param, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", param, initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self.built = True

    def _choose_fused(self, shape: TensorShape) -> bool:
        """TensorFlow's choice: fused for 4-D inputs normalized on axis 1 or 3 and 5-D ones on
        axis 1 or 4, in float16/bfloat16/float32. ``fused=True`` raises where that is not
        possible (Keras); ``tf.layers`` (:attr:`_FUSED_IF_POSSIBLE`) falls back silently."""
        rank = shape.rank
        can_fuse = (self._axis in ({4: (1, 3), 5: (1, 4)}.get(rank, ()))
                    and self.dtype in ("float16", "bfloat16", "float32"))
        if self.fused is None or self._FUSED_IF_POSSIBLE:
            return can_fuse and self.fused is not False
        if self.fused and not can_fuse:
            raise ValueError(f"Layer {self.name}: fused=True needs a float16/bfloat16/float32 4-D input "
                             f"normalized on axis 1 or 3 or a 5-D one on axis 1 or 4, got shape {shape}, "
                             f"axis {self.axis} and dtype {self.dtype}")
        return bool(self.fused)

    def _params(self, channels: int) -> tuple[Any, Any]:
        gamma = self.gamma if self.gamma is not None else constant(1.0, shape=[channels])
        beta = self.beta if self.beta is not None else constant(0.0, shape=[channels])
        return gamma, beta

    def call(self, inputs: Any, training: Any = None) -> Any:
        training = backend.training_value(training)
        static = _static_bool(training)
        if self._fused:
            output, mean, variance = self._fused_call(inputs, training)
        else:
            output, mean, variance = self._moments_call(inputs, training)
        if static is False:
            return output
        momentum = self.momentum if static is True else backend.smart_cond(
            training, lambda: constant(self.momentum), lambda: constant(1.0))
        self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
        self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return output

    def _fused_call(self, inputs: Any, training: Any) -> tuple[Any, Any, Any]:
        rank = inputs.shape.rank
        fmt = {4: "NHWC", 5: "NDHWC"}[rank] if self._axis == rank - 1 else {4: "NCHW", 5: "NCDHW"}[rank]
        gamma, beta = self._params(inputs.shape.as_list()[self._axis])

        def train() -> Any:
            return nn_norm_ops.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon,
                                                data_format=fmt, is_training=True)

        def infer() -> Any:
            return nn_norm_ops.fused_batch_norm(inputs, gamma, beta, mean=self.moving_mean,
                                                variance=self.moving_variance, epsilon=self.epsilon,
                                                data_format=fmt, is_training=False)

        return tuple(backend.smart_cond(training, train, infer))

    def _moments_call(self, inputs: Any, training: Any) -> tuple[Any, Any, Any]:
        rank = inputs.shape.rank
        reduce_axes = [i for i in range(rank) if i != self._axis]
        channels = inputs.shape.as_list()[self._axis]
        gamma, beta = self._params(channels)
        mean, variance = backend.smart_cond(
            training, lambda: nn_norm_ops.moments(inputs, reduce_axes),
            lambda: (array_ops.identity(self.moving_mean), array_ops.identity(self.moving_variance)))
        shape = [1] * rank
        shape[self._axis] = channels

        def bcast(t: Any) -> Any:
            return t if self._axis == rank - 1 else array_ops.reshape(t, shape)

        output = nn_norm_ops.batch_normalization(inputs, bcast(mean), bcast(variance), bcast(beta),
                                                 bcast(gamma), self.epsilon)
        return output, mean, variance

    def _assign_moving_average(self, variable: Any, value: Any, momentum: Any) -> Any:
        with get_default_graph().name_scope("AssignMovingAvg"):
            decay = math_ops.subtract(1.0, momentum, name="decay")
            delta = math_ops.multiply(math_ops.subtract(variable, value), decay)
            return variable.assign_sub(delta)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale}


def _static_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if hasattr(value, "op") and value.op.type == "Const":
        from flowmesh.ops._builders import constant_value

        return bool(constant_value(value))
    return None


class LayerNormalization(Layer):
    """Normalizes each example over ``axis`` (default the last) with its own mean and
    variance, then scales by ``gamma`` and shifts by ``beta``."""

    def __init__(self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape)
        axes = [self.axis] if isinstance(self.axis, int) else list(self.axis)
        self._axes = sorted(a % shape.rank for a in axes)
        param = [shape[a] for a in self._axes]
        self.gamma = self.add_weight("gamma", param, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", param, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        rank = inputs.shape.rank
        mean, variance = nn_norm_ops.moments(inputs, self._axes, keepdims=True)
        shape = [inputs.shape[i] if i in self._axes else 1 for i in range(rank)]

        def bcast(t: Any) -> Any:
            if t is None or self._axes == list(range(rank - len(self._axes), rank)):
                return t
            return array_ops.reshape(t, shape)

        return nn_norm_ops.batch_normalization(inputs, mean, variance, bcast(self.beta), bcast(self.gamma),
                                               self.epsilon)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over ``axis``."""

    def __init__(self, axis: Any = -1, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(axis, (int, list, tuple)):
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.supports_masking = True

    def call(self, inputs: Any) -> Any:
        from flowmesh.ops import cast_ops

        return nn_norm_ops.l2_normalize(cast_ops.cast(inputs, self.dtype), axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis}


class GroupNormalization(Layer):
    """Normalizes each sample over groups of ``groups`` channels (along ``axis``) and the
    other non-batch axes, then scales by ``gamma`` and shifts by ``beta`` per channel."""

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups, self.axis, self.epsilon, self.center, self.scale = groups, axis, epsilon, center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        dim = dims[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(dims)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.gamma = self.add_weight("gamma", [dim], initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", [dim], initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.built = True

    def _grouped(self, x: Any) -> Any:
        dims = array_ops.shape(x)
        shape = [dims[i] for i in range(x.shape.rank)]
        shape[self.axis] = dims[self.axis] // self.groups
        shape.insert(self.axis, self.groups)
        return array_ops.reshape(x, array_ops.stack(shape))

    def call(self, inputs: Any, mask: Any = None) -> Any:
        from flowmesh.ops import cast_ops

        rank = inputs.shape.rank
        grouped = self._grouped(inputs)
        weights = cast_ops.cast(self._grouped(array_ops.ones_like(inputs) if mask is None else
                                              reduction_ops.broadcast_to(mask, array_ops.shape(inputs))),
                                grouped.dtype)
        axes = list(range(1, rank + 1))
        axes.pop(self.axis - 1)
        mean, variance = nn_norm_ops.weighted_moments(grouped, axes, weights, keepdims=True)
        shape = [1] * rank
        shape[self.axis] = inputs.shape.as_list()[self.axis] // self.groups
        shape.insert(self.axis, self.groups)
        gamma = array_ops.reshape(self.gamma, shape) if self.gamma is not None else None
        beta = array_ops.reshape(self.beta, shape) if self.beta is not None else None
        normed = nn_norm_ops.batch_normalization(grouped, mean, variance, beta, gamma, self.epsilon)
        out = array_ops.reshape(normed, array_ops.shape(inputs))
        out.set_shape(inputs.shape)
        return out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": initializers.serialize(self.beta_initializer),
                "gamma_initializer": initializers.serialize(self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": constraints.serialize(self.beta_constraint),
                "gamma_constraint": constraints.serialize(self.gamma_constraint)}
