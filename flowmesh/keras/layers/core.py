"""Core Keras layers: ``Dense``, ``Activation``, ``Dropout``, ``Flatten``, ``Reshape``, ``Lambda``."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, backend, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.kernel_bias_options import set_kernel_bias_options
from flowmesh.ops import array_ops, linalg_ops, nn_impl, nn_ops


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; inputs of rank > 2 are contracted on their
    last axis (``tensordot``). Weights: ``kernel`` [in, units], ``bias`` [units]."""

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer, "
                             f"got {units} (layer {self.name}).")
        self.use_bias = use_bias
        set_kernel_bias_options(self, activation, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape)
        last = shape[-1] if shape.rank else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", [last, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        rank = inputs.shape.rank
        if rank == 2:
            outputs = linalg_ops.matmul(inputs, self.kernel)
        else:
            outputs = linalg_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not activations.linear:
            return self.activation(outputs)
        return outputs

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(units=self.units, activation=activations.serialize(self.activation),
                      use_bias=self.use_bias,
                      kernel_initializer=initializers.serialize(self.kernel_initializer),
                      bias_initializer=initializers.serialize(self.bias_initializer),
                      kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
                      bias_regularizer=regularizers.serialize(self.bias_regularizer),
                      activity_regularizer=regularizers.serialize(self._activity_regularizer),
                      kernel_constraint=constraints.serialize(self.kernel_constraint),
                      bias_constraint=constraints.serialize(self.bias_constraint))
        return config


class Activation(Layer):
    """Applies an activation function given by name or callable."""

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of the inputs while training (scaling the rest by
    ``1 / (1 - rate)``); the identity otherwise. ``training=None`` follows the learning phase."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if not 0 <= float(rate) <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate} (layer {self.name})")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self.supports_masking = True

    def _get_noise_shape(self, inputs: Any) -> Any:
        if self.noise_shape is None:
            return None
        dynamic = array_ops.shape(inputs)
        return array_ops.stack([dynamic[i] if d is None else d for i, d in enumerate(self.noise_shape)])

    def call(self, inputs: Any, training: Any = None) -> Any:
        if self.rate == 0:
            return array_ops.identity(inputs)

        def dropped() -> Any:
            return nn_impl.dropout(inputs, rate=self.rate, noise_shape=self._get_noise_shape(inputs),
                                   seed=self.seed)

        return backend.smart_cond(backend.training_value(training), dropped,
                                  lambda: array_ops.identity(inputs))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class Flatten(Layer):
    """Reshapes ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]``."""

    def __init__(self, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Any) -> Any:
        if self.data_format == "channels_first" and inputs.shape.rank and inputs.shape.rank > 2:
            perm = [0] + list(range(2, inputs.shape.rank)) + [1]
            inputs = array_ops.transpose(inputs, perm)
        dims = inputs.shape.as_list() if inputs.shape.rank is not None else None
        if dims is not None and len(dims) == 1:
            return array_ops.expand_dims(inputs, 1)
        if dims is not None and all(d is not None for d in dims[1:]):
            return array_ops.reshape(inputs, [-1, int(np.prod(dims[1:]))])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """Reshapes the non-batch dimensions to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs: Any) -> Any:
        dims = inputs.shape.as_list() if inputs.shape.rank is not None else None
        if dims is not None and all(d is not None for d in dims[1:]):
            total = int(np.prod(dims[1:]))
            known = int(np.prod([d for d in self.target_shape if d != -1]))
            if (-1 not in self.target_shape and known != total) or (known and total % known):
                raise ValueError(
                    f"Layer {self.name}: total size of new array must be unchanged, input_shape = "
                    f"{tuple(dims[1:])}, output_shape = {self.target_shape}")
        return array_ops.reshape(inputs, [-1] + list(self.target_shape)) if -1 not in self.target_shape \
            else array_ops.reshape(inputs, array_ops.concat(
                [array_ops.shape(inputs)[:1], list(self.target_shape)], 0))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "target_shape": self.target_shape}


class Lambda(Layer):
    """Wraps an arbitrary function of the inputs as a layer (no weights). ``mask``: the
    output mask, or a callable ``mask(inputs, input_mask)`` (by default no mask, as Keras)."""

    def __init__(self, function: Any, output_shape: Any = None, mask: Any = None,
                 arguments: dict | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.function, self.arguments = function, dict(arguments or {})
        self.mask = mask
        self.supports_masking = True

    def call(self, inputs: Any) -> Any:
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return self.mask(inputs, mask) if callable(self.mask) else self.mask


class Identity(Layer):
    """Returns its inputs (a copy of each tensor, so the functional graph has a node)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs: Any) -> Any:
        from flowmesh.ops import _structure as nest

        return nest.map_structure(array_ops.identity, inputs)
