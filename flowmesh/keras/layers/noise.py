"""Regularization layers that add noise while training (the identity at inference):
``GaussianNoise``, ``GaussianDropout``, ``AlphaDropout``, ``SpatialDropout1D/2D/3D``; and
``ActivityRegularization``. ``training=None`` follows the learning phase."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import normalize_data_format
from flowmesh.keras.layers.core import Dropout
from flowmesh.ops import array_ops, cast_ops, math_ops


class _Noise(Layer):
    def __init__(self, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.seed = seed
        self.supports_masking = True

    def _train_only(self, noised: Any, inputs: Any, training: Any) -> Any:
        return backend.in_train_phase(noised, inputs, training=backend.training_value(training))


class GaussianNoise(_Noise):
    """Adds zero-mean Gaussian noise of standard deviation ``stddev`` while training."""

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.stddev = stddev

    def call(self, inputs: Any, training: Any = None) -> Any:
        def noised() -> Any:
            return inputs + backend.random_normal(array_ops.shape(inputs), 0.0, self.stddev, inputs.dtype, self.seed)

        return self._train_only(noised, inputs, training)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_Noise):
    """Multiplies by Gaussian noise of mean 1 and standard deviation ``sqrt(rate / (1 - rate))``
    while training."""

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.rate = rate

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not 0 < self.rate < 1:
            return inputs
        stddev = float(np.sqrt(self.rate / (1.0 - self.rate)))

        def noised() -> Any:
            return inputs * backend.random_normal(array_ops.shape(inputs), 1.0, stddev, inputs.dtype, self.seed)

        return self._train_only(noised, inputs, training)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(_Noise):
    """Dropout that keeps the mean and variance of SELU activations: dropped entries are set
    to ``-alpha * scale`` and the result is rescaled (Klambauer et al.)."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.rate, self.noise_shape = rate, noise_shape

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not 0 < self.rate < 1:
            return inputs
        noise_shape = self.noise_shape if self.noise_shape is not None else array_ops.shape(inputs)

        def dropped() -> Any:
            alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
            kept = cast_ops.cast(math_ops.greater_equal(backend.random_uniform(noise_shape, seed=self.seed),
                                                        self.rate), inputs.dtype)
            a = ((1 - self.rate) * (1 + self.rate * alpha_p**2)) ** -0.5
            b = -a * alpha_p * self.rate
            return a * (inputs * kept + alpha_p * (1 - kept)) + b

        return self._train_only(dropped, inputs, training)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}  # no noise_shape, as tf-keras


class _SpatialDropout(Dropout):
    """Drops whole feature maps (channels) instead of single entries."""

    rank = 1

    def __init__(self, rate: float, data_format: str | None = None, **kwargs: Any):
        super().__init__(rate, **kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def _get_noise_shape(self, inputs: Any) -> Any:
        dims = array_ops.shape(inputs)
        ones = [1] * self.rank
        if self.data_format == "channels_first" and self.rank > 1:
            return array_ops.stack([dims[0], dims[1], *ones])
        return array_ops.stack([dims[0], *ones, dims[self.rank + 1]])

    def get_config(self) -> dict[str, Any]:
        return super().get_config()  # Dropout's (tf-keras's configs leave data_format out)


class SpatialDropout1D(_SpatialDropout):
    rank = 1

    def __init__(self, rate: float, **kwargs: Any):
        super().__init__(rate, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    rank = 2


class SpatialDropout3D(_SpatialDropout):
    rank = 3


class ActivityRegularization(Layer):
    """The identity, adding ``l1 * sum(|x|) + l2 * sum(x**2)`` of its output to the losses."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1, self.l2 = l1, l2

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
