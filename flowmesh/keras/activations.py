"""``tf.keras.activations``: activation functions by name."""

from __future__ import annotations

from typing import Any

from flowmesh.ops import clip_ops, math_ops, nn_impl, nn_ops, select_ops


def linear(x: Any) -> Any:
    return x


def relu(x: Any, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Any:
    """``max(x, 0)``; ``alpha`` gives a leaky slope, ``max_value`` a ceiling."""
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return nn_ops.relu(x)
    if alpha != 0.0 and max_value is None and threshold == 0.0:
        return nn_impl.leaky_relu(x, alpha=alpha)
    y = nn_ops.relu(math_ops.subtract(x, threshold)) if threshold else nn_ops.relu(x)
    return math_ops.minimum(y, max_value) if max_value is not None else y


def softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.log_softmax(x, axis=axis)


def sigmoid(x: Any) -> Any:
    return math_ops.sigmoid(x)


def hard_sigmoid(x: Any) -> Any:
    """``clip(0.2 * x + 0.5, 0, 1)`` (tf-keras's definition)."""
    return clip_ops.clip_by_value(math_ops.add(math_ops.multiply(x, 0.2), 0.5), 0.0, 1.0)


def tanh(x: Any) -> Any:
    return math_ops.tanh(x)


def elu(x: Any, alpha: float = 1.0) -> Any:
    y = nn_impl.elu(x)
    if alpha == 1.0:
        return y
    return select_ops.where(math_ops.greater(x, 0.0), y, math_ops.multiply(y, alpha))


def selu(x: Any) -> Any:
    return nn_impl.selu(x)


def softplus(x: Any) -> Any:
    return nn_impl.softplus(x)


def softsign(x: Any) -> Any:
    return nn_impl.softsign(x)


def swish(x: Any) -> Any:
    return nn_impl.swish(x)


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    return math_ops.tanh(nn_impl.softplus(x)) * x


def gelu(x: Any, approximate: bool = False) -> Any:
    return nn_impl.gelu(x, approximate=approximate)


def exponential(x: Any) -> Any:
    return math_ops.exp(x)


_BY_NAME = {f.__name__: f for f in (linear, relu, softmax, log_softmax, sigmoid, hard_sigmoid, tanh, elu,
                                     selu, softplus, softsign, swish, gelu, exponential, mish)}
_BY_NAME["silu"] = swish


def get(identifier: Any) -> Any:
    """An activation from None (linear), a name or a callable.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown activation function: {identifier!r}. Valid names: {sorted(_BY_NAME)}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation: Any) -> str:
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    return getattr(activation, "__name__", "linear")


def deserialize(name: str) -> Any:
    return get(name)
