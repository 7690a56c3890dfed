"""``tf.keras.initializers`` / ``tf.initializers``: TensorFlow's initializers by class and name.

The classes are those of ``flowmesh.ops.init_ops`` (TensorFlow 1.x semantics: an
initializer is called as ``init(shape, dtype=None, partition_info=None)``); this module
adds Keras's names (``glorot_uniform``, ``he_normal``, ``"zeros"``...) and :func:`get`.
"""

from __future__ import annotations

from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.ops import init_ops
from flowmesh.ops.init_ops import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    Initializer,
    Ones,
    Orthogonal,
    VarianceScaling,
    Zeros,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)

_fill_namespace(globals(), "keras.initializers")


class RandomUniform(init_ops.RandomUniform):
    """Uniform in ``[minval, maxval)``; Keras's defaults ``(-0.05, 0.05)`` (``tf.keras``'s
    v1 initializer), unlike ``tf.random_uniform_initializer``'s ``(0, 1)``."""

    def __init__(self, minval: float = -0.05, maxval: float | None = 0.05, seed: int | None = None,
                 dtype: Any = "float32"):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


class RandomNormal(init_ops.RandomNormal):
    """Normal with Keras's default ``stddev=0.05``."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None, dtype: Any = "float32"):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    """Truncated normal with Keras's default ``stddev=0.05``."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None, dtype: Any = "float32"):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class Identity(Initializer):
    """The identity matrix (times ``gain``) for 2-D shapes."""

    def __init__(self, gain: float = 1.0, dtype: Any = "float32"):
        self.gain, self.dtype = gain, dtype

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        from flowmesh.ops.linalg_ops import eye
        from flowmesh.ops.math_ops import multiply

        dims = [int(d) for d in shape]
        if len(dims) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices, got {dims}")
        return multiply(eye(dims[0], dims[1], dtype=dtype or self.dtype), self.gain)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain}


zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
orthogonal = Orthogonal
identity = Identity
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
HeNormal = he_normal
HeUniform = he_uniform
LecunNormal = lecun_normal
LecunUniform = lecun_uniform

_BY_NAME: dict[str, Any] = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "orthogonal": Orthogonal, "identity": Identity,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": he_normal,
    "he_uniform": he_uniform, "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
    "uniform": RandomUniform, "normal": RandomNormal,
}
_CLASS_NAMES = {"Zeros": "zeros", "Ones": "ones", "Constant": "constant", "RandomNormal": "random_normal",
                "RandomUniform": "random_uniform", "TruncatedNormal": "truncated_normal",
                "VarianceScaling": "variance_scaling", "Orthogonal": "orthogonal",
                "Identity": "identity", "GlorotUniform": "glorot_uniform",
                "GlorotNormal": "glorot_normal"}


def get(identifier: Any) -> Any:
    """An initializer from a name (``"glorot_uniform"``), a config dict, a class or an instance.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type):
        return identifier()
    if isinstance(identifier, dict):
        name = _CLASS_NAMES.get(identifier["class_name"], identifier["class_name"])
        return _lookup(name)(**identifier.get("config", {}))
    if isinstance(identifier, str):
        return _lookup(_CLASS_NAMES.get(identifier, identifier))()
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def _lookup(name: str) -> Any:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"Unknown initializer: {name!r}. Valid names: {sorted(_BY_NAME)}") from None


def serialize(initializer: Any) -> dict[str, Any]:
    """``{"class_name": ..., "config": ...}`` for :func:`get` to rebuild."""
    cls = type(initializer).__name__
    if isinstance(initializer, VarianceScaling) and cls == "VarianceScaling":
        return {"class_name": "VarianceScaling", "config": initializer.get_config()}
    config = initializer.get_config()
    if isinstance(initializer, VarianceScaling):
        config = {"seed": initializer.seed}
    return {"class_name": cls, "config": config}


def deserialize(config: dict[str, Any]) -> Any:
    return get(config)


__all__ = [
    "Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Identity", "Initializer",
    "LecunNormal", "LecunUniform", "Ones", "Orthogonal", "RandomNormal", "RandomUniform",
    "TruncatedNormal", "VarianceScaling", "Zeros", "constant", "deserialize", "get", "glorot_normal",
    "glorot_uniform", "he_normal", "he_uniform", "identity", "lecun_normal", "lecun_uniform", "ones",
    "orthogonal", "random_normal", "random_uniform", "serialize", "truncated_normal",
    "variance_scaling", "zeros",
]
