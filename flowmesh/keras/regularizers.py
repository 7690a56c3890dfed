"""``tf.keras.regularizers``: L1/L2 weight penalties.

A regularizer is called on a weight and returns a scalar loss. ``tf.layers`` and
``get_variable(regularizer=...)`` put that loss into ``GraphKeys.REGULARIZATION_LOSSES``
(read by ``tf.losses.get_regularization_loss``); Keras layers also list it in
``layer.losses``, which ``Model.compile`` adds to the training loss.
"""

from __future__ import annotations

from typing import Any

from flowmesh.ops import math_ops
from flowmesh.ops.reduction_ops import reduce_sum


class Regularizer:
    """Base class: ``__call__(weight) -> scalar Tensor``."""

    def __call__(self, x: Any) -> Any:
        return 0.0

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Regularizer:
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)`` (Keras's definition: no factor 1/2)."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x: Any) -> Any:
        terms = []
        if self.l1:
            terms.append(math_ops.multiply(self.l1, reduce_sum(math_ops.abs(x))))
        if self.l2:
            terms.append(math_ops.multiply(self.l2, reduce_sum(math_ops.square(x))))
        if not terms:
            from flowmesh.ops.constant_op import constant

            return constant(0.0, dtype=x.dtype)
        return terms[0] if len(terms) == 1 else math_ops.add(terms[0], terms[1])

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1: float = 0.01, **kwargs: Any):
        super().__init__(l1=kwargs.pop("l", l1))

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2: float = 0.01, **kwargs: Any):
        super().__init__(l2=kwargs.pop("l", l2))

    def get_config(self) -> dict[str, Any]:
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Penalizes non-orthogonal rows (``mode="rows"``) or columns of a 2-D weight:
    ``factor * mean |<u_i, u_j>|`` over pairs of the L2-normalized vectors, ``i < j``."""

    def __init__(self, factor: float = 0.01, mode: str = "rows"):
        if mode not in ("rows", "columns"):
            raise ValueError(f"Invalid value for argument `mode`. Expected one of {{'rows', 'columns'}}. "
                             f"Received: mode={mode}")
        self.factor, self.mode = float(factor), mode

    def __call__(self, x: Any) -> Any:
        from flowmesh.ops import linalg_ops
        from flowmesh.ops.nn_norm_ops import l2_normalize

        if x.shape.rank != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        rows = self.mode == "rows"
        x = l2_normalize(x, axis=1 if rows else 0)
        product = linalg_ops.matmul(x, x, transpose_b=rows, transpose_a=not rows)
        size = int(x.shape[0] if rows else x.shape[1])
        off_diagonal = product * (1.0 - linalg_ops.eye(size, dtype=x.dtype))
        pairs = size * (size - 1.0) / 2.0
        return self.factor * 0.5 * reduce_sum(math_ops.abs(off_diagonal)) / pairs

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "mode": self.mode}


orthogonal_regularizer = OrthogonalRegularizer


def l1(l: float = 0.01) -> L1L2:  # noqa: E741 - Keras's argument name
    """``l * sum(|x|)``."""
    return L1(l1=l)


def l2(l: float = 0.01) -> L1L2:  # noqa: E741
    """``l * sum(x**2)``."""
    return L2(l2=l)


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""
    return L1L2(l1=l1, l2=l2)


_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2,
            "OrthogonalRegularizer": OrthogonalRegularizer, "orthogonal_regularizer": OrthogonalRegularizer}


def get(identifier: Any) -> Any:
    """A regularizer from None, a name, a config dict or a callable.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier["class_name"])
        if cls is None:
            raise ValueError(f"Unknown regularizer: {identifier['class_name']!r}. Valid: {sorted(_BY_NAME)}")
        return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown regularizer: {identifier!r}. Valid names: {sorted(_BY_NAME)}")
        return _BY_NAME[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")


def serialize(regularizer: Any) -> dict[str, Any] | None:
    if regularizer is None:
        return None
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config: dict[str, Any]) -> Any:
    return get(config)


__all__ = ["L1", "L1L2", "L2", "OrthogonalRegularizer", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2",
           "orthogonal_regularizer", "serialize"]
