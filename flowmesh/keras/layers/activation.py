"""Activation layers: ``LeakyReLU``, ``ReLU``, ``PReLU``, ``ELU``, ``Softmax``,
``ThresholdedReLU`` (tf-keras's definitions, through ``tf.keras.backend``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import backend, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops


class _Elementwise(Layer):
    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True


class LeakyReLU(_Elementwise):
    """``x`` for ``x >= 0``, ``alpha * x`` below."""

    def __init__(self, alpha: float = 0.3, **kwargs: Any):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError(f"The alpha value of a Leaky ReLU layer cannot be None. Expected a float. "
                             f"Received: alpha={alpha}")
        self.alpha = float(alpha)

    def call(self, inputs: Any) -> Any:
        return backend.relu(inputs, alpha=self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "alpha": self.alpha}


class ReLU(_Elementwise):
    """``min(max(x, threshold), max_value)``, with slope ``negative_slope`` below ``threshold``."""

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: {max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. Received: {negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError(f"threshold of a ReLU layer cannot be a negative value. Received: {threshold}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)

    def call(self, inputs: Any) -> Any:
        return backend.relu(inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class PReLU(_Elementwise):
    """``x`` for ``x >= 0``, ``alpha * x`` below, with a learned ``alpha`` per input entry
    (shared along ``shared_axes``)."""

    def __init__(self, alpha_initializer: Any = "zeros", alpha_regularizer: Any = None,
                 alpha_constraint: Any = None, shared_axes: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        else:
            self.shared_axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        param = list(dims[1:])
        for axis in self.shared_axes or []:
            param[axis - 1] = 1
        self.alpha = self.add_weight("alpha", param, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {i: dims[i] for i in range(1, len(dims)) if self.shared_axes and i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(dims), axes=axes)
        self.built = True

    def call(self, inputs: Any) -> Any:
        return backend.relu(inputs) - self.alpha * backend.relu(-inputs)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint), "shared_axes": self.shared_axes}


class ELU(_Elementwise):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` below."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError(f"Alpha of an ELU layer cannot be None, expecting a float. Received: {alpha}")
        self.alpha = float(alpha)

    def call(self, inputs: Any) -> Any:
        return backend.elu(inputs, self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "alpha": self.alpha}


def _large_negative(dtype: Any) -> float:
    return -65500.0 if dtype.name == "float16" else -1e9


class Softmax(_Elementwise):
    """Softmax over ``axis`` (an int or a tuple of axes); masked entries (``mask`` false)
    get a large negative score first."""

    def __init__(self, axis: Any = -1, robust_masking: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis, self.robust_masking = axis, robust_masking

    def call(self, inputs: Any, mask: Any = None) -> Any:
        if mask is not None and self.robust_masking:  # masked scores replaced, not shifted
            from flowmesh.ops.select_ops import where

            keep = mask if mask.dtype.name == "bool" else math_ops.greater(mask, 0.5)
            inputs = where(keep, inputs, array_ops.fill(array_ops.shape(inputs), _large_negative(inputs.dtype)))
        elif mask is not None:
            inputs = inputs + (1.0 - cast_ops.cast(mask, inputs.dtype)) * _large_negative(inputs.dtype)
        if isinstance(self.axis, (tuple, list)):
            if len(self.axis) > 1:
                return math_ops.exp(inputs - reduction_ops.reduce_logsumexp(inputs, axis=list(self.axis),
                                                                            keepdims=True))
            return backend.softmax(inputs, axis=self.axis[0])
        return backend.softmax(inputs, axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        config = {**super().get_config(), "axis": self.axis}
        if self.robust_masking:
            config["robust_masking"] = True
        return config


class ThresholdedReLU(_Elementwise):
    """``x`` for ``x > theta``, 0 otherwise."""

    def __init__(self, theta: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError(f"Theta of a Thresholded ReLU layer cannot be None or negative. Received: {theta}")
        self.theta = float(theta)

    def call(self, inputs: Any) -> Any:
        return inputs * cast_ops.cast(math_ops.greater(inputs, self.theta), inputs.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "theta": self.theta}
