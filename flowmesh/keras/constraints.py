"""``tf.keras.constraints``: projections applied to a weight after each optimizer update
(``Dense(kernel_constraint=MaxNorm(2))``), as tf-keras defines them.

A constraint is called on a weight and returns its constrained value; the variable's
``constraint`` is applied by the optimizer after the update, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend_state
from flowmesh.ops import cast_ops, clip_ops, math_ops
from flowmesh.ops.reduction_ops import reduce_sum


def _norms(w: Any, axis: Any) -> Any:
    return math_ops.sqrt(reduce_sum(math_ops.square(w), axis=axis, keepdims=True))


class Constraint:
    """Base class: ``__call__(w) -> constrained w`` (the identity here)."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Constraint:
        return cls(**config)


class MaxNorm(Constraint):
    """Rescales slices along ``axis`` whose L2 norm exceeds ``max_value`` to that norm."""

    def __init__(self, max_value: float = 2, axis: Any = 0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w: Any) -> Any:
        norms = _norms(w, self.axis)
        desired = clip_ops.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (backend_state.epsilon() + norms))

    def get_config(self) -> dict[str, Any]:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Zeroes the negative entries."""

    def __call__(self, w: Any) -> Any:
        return w * cast_ops.cast(math_ops.greater_equal(w, 0.0), backend_state.floatx())


class UnitNorm(Constraint):
    """Scales slices along ``axis`` to unit L2 norm."""

    def __init__(self, axis: Any = 0):
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        return w / (backend_state.epsilon() + _norms(w, self.axis))

    def get_config(self) -> dict[str, Any]:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves the L2 norms of slices along ``axis`` into ``[min_value, max_value]``, at
    ``rate`` (1: at once)."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0, axis: Any = 0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w: Any) -> Any:
        norms = _norms(w, self.axis)
        clipped = clip_ops.clip_by_value(norms, float(self.min_value), float(self.max_value))
        desired = self.rate * clipped + (1 - self.rate) * norms
        return w * (desired / (backend_state.epsilon() + norms))

    def get_config(self) -> dict[str, Any]:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class RadialConstraint(Constraint):
    """Makes each ``[h, w]`` slice of a square 2-D convolution kernel ``[h, w, in, out]``
    constant on rings around its centre (tf-keras's values: the centre takes
    ``kernel[c - 1, c - 1]`` and ring ``r`` the diagonal entry beyond it, ``c = h // 2``)."""

    def __call__(self, w: Any) -> Any:
        from flowmesh.ops.nd_index_ops import gather_nd

        dims = w.shape.as_list()
        if len(dims) != 4 or dims[0] != dims[1] or None in dims[:2]:
            raise ValueError(f"The weight tensor must have rank 4 with square spatial dimensions. Received "
                             f"weight tensor with shape: {tuple(dims)}")
        n = dims[0]
        start = n // 2
        index = np.zeros((n, n, 2), np.int32)
        for a in range(n):
            for b in range(n):
                if n % 2:
                    ring = max(abs(a - start), abs(b - start))
                    diag = start - 1 if ring == 0 else start + ring - 1
                else:
                    ring = max(_even_distance(a, start), _even_distance(b, start))
                    diag = start - 1 if ring == 0 else start + ring
                index[a, b] = (diag, diag)
        return gather_nd(w, index)


def _even_distance(i: int, start: int) -> int:
    return start - 1 - i if i < start - 1 else i - start if i > start else 0


max_norm, non_neg, unit_norm, min_max_norm, radial_constraint = (MaxNorm, NonNeg, UnitNorm, MinMaxNorm,
                                                                 RadialConstraint)
_BY_NAME = {"MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm,
            "RadialConstraint": RadialConstraint, "Constraint": Constraint, "max_norm": MaxNorm,
            "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
            "radial_constraint": RadialConstraint}


def serialize(constraint: Any) -> dict[str, Any] | None:
    if constraint is None:
        return None
    return {"class_name": type(constraint).__name__, "config": constraint.get_config()}


def deserialize(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    table = {**_BY_NAME, **(custom_objects or {})}
    cls = table.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown constraint: {config['class_name']!r}. Valid: {sorted(_BY_NAME)}")
    return cls.from_config(config.get("config", {})) if hasattr(cls, "from_config") else cls(**config["config"])


def get(identifier: Any) -> Any:
    """A constraint from None, a name, a config dict or a callable.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown constraint: {identifier!r}. Valid names: {sorted(_BY_NAME)}")
        return _BY_NAME[identifier]()
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")


__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "RadialConstraint", "UnitNorm", "deserialize", "get",
           "max_norm", "min_max_norm", "non_neg", "radial_constraint", "serialize", "unit_norm"]
