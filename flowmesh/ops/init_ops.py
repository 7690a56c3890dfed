"""Variable initializers (``tf.zeros_initializer``, ``tf.glorot_uniform_initializer`` ...).

An initializer is called as ``init(shape, dtype=None, partition_info=None)`` and returns
a Tensor; ``get_variable`` uses ``glorot_uniform_initializer`` by default.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.shapes import as_shape
from flowmesh.ops import array_ops, random_ops
from flowmesh.ops.constant_op import constant


class Initializer:
    """Base class: ``__call__(shape, dtype=None, partition_info=None) -> Tensor``."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        return cls(**config)


def _dims(shape: Any) -> list[int]:
    return [int(d) for d in as_shape(shape).as_list()]


class Zeros(Initializer):
    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return array_ops.zeros(_dims(shape), dtype or self.dtype)


class Ones(Initializer):
    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return array_ops.ones(_dims(shape), dtype or self.dtype)


class Constant(Initializer):
    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return constant(self.value, dtype=dtype or self.dtype, shape=_dims(shape))

    def get_config(self) -> dict[str, Any]:
        value = self.value.tolist() if isinstance(self.value, np.ndarray) else self.value
        return {"value": value, "dtype": self.dtype.name}


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None,
                 dtype: Any = dtypes.float32):
        self.mean, self.stddev, self.seed, self.dtype = mean, stddev, seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.random_normal(_dims(shape), self.mean, self.stddev, dtype or self.dtype, self.seed)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.truncated_normal(_dims(shape), self.mean, self.stddev, dtype or self.dtype, self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval: float = 0.0, maxval: float | None = None, seed: int | None = None,
                 dtype: Any = dtypes.float32):
        self.minval, self.maxval, self.seed, self.dtype = minval, maxval, seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.random_uniform(_dims(shape), self.minval, self.maxval, dtype or self.dtype, self.seed)


def _fans(shape: list[int]) -> tuple[float, float]:
    if not shape:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = float(np.prod(shape[:-2])) if len(shape) > 2 else 1.0
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance ``scale / n`` where n is fan_in, fan_out or their mean."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: int | None = None, dtype: Any = dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.seed, self.dtype = seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dims = _dims(shape)
        full = _dims(partition_info.full_shape) if partition_info is not None else dims
        fan_in, fan_out = _fans(full)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dtype = dtype or self.dtype
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(dims, 0.0, stddev, dtype, self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(scale), dtype, self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(dims, -limit, limit, dtype, self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian sample (NumPy)."""

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.gain, self.seed, self.dtype = gain, seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        rng = np.random.default_rng(self.seed)
        a = rng.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant(self.gain * q.reshape(dims), dtype=dtype or self.dtype)


class UniformUnitScaling(Initializer):
    """``tf.uniform_unit_scaling_initializer`` (deprecated in TensorFlow): uniform in
    ``[-m, m]`` with ``m = factor * sqrt(3 / input_size)``, ``input_size`` the product of
    all dimensions but the last (of the full shape of a partitioned variable)."""

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.factor, self.seed, self.dtype = float(factor), seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        full = _dims(partition_info.full_shape) if partition_info is not None else _dims(shape)
        input_size = max(float(np.prod(full[:-1])) if len(full) > 1 else 1.0, 1.0)
        limit = math.sqrt(3.0 / input_size) * self.factor
        return random_ops.random_uniform(_dims(shape), -limit, limit, dtype or self.dtype, self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only), as ``tf.initializers.identity``."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32):
        self.gain, self.dtype = float(gain), dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dims = _dims(partition_info.full_shape) if partition_info is not None else _dims(shape)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        value = self.gain * np.eye(*dims)
        if partition_info is not None:
            offsets = list(partition_info.var_offset)
            part = _dims(shape)
            value = value[offsets[0]:offsets[0] + part[0], offsets[1]:offsets[1] + part[1]]
        return constant(value, dtype=dtype or self.dtype)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "dtype": self.dtype.name}


zeros_initializer = Zeros
uniform_unit_scaling_initializer = UniformUnitScaling
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal


def he_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "uniform", seed)
