"""``tf.keras.backend`` activations and normalization (``K.relu``, ``K.softmax``,
``K.dropout``, ``K.batch_normalization``, ``K.bias_add``...) as tf-keras defines them in
graph mode, built from flowmesh ops; re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras.backend_state import data_format_or_default
from flowmesh.ops import array_ops, cast_ops, clip_ops, math_ops, nn_impl, nn_ops


# --- activations --------------------------------------------------------------------------
def relu(x: Any, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Any:
    """``max(x, 0)``, with a leaky slope ``alpha`` below ``threshold`` and a cap ``max_value``."""
    x = convert_to_tensor(x)
    negative = None
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return nn_impl.leaky_relu(x, alpha=alpha)
        negative = nn_ops.relu(-x + threshold) if threshold != 0 else nn_ops.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * cast_ops.cast(math_ops.greater(x, threshold), x.dtype)
    elif max_value == 6:
        x, clip_max = nn_impl.relu6(x), False
    else:
        x = nn_ops.relu(x)
    if clip_max:
        x = clip_ops.clip_by_value(x, 0.0, float(max_value))
    if negative is not None:
        x = x - alpha * negative
    return x


def elu(x: Any, alpha: float = 1.0) -> Any:
    res = nn_impl.elu(x)
    if alpha == 1:
        return res
    from flowmesh.ops.select_ops import where

    return where(math_ops.greater(x, 0), res, alpha * res)


def softmax(x: Any, axis: int = -1) -> Any:
    return nn_ops.softmax(x, axis=axis)


def softplus(x: Any) -> Any:
    return nn_impl.softplus(x)


def softsign(x: Any) -> Any:
    return nn_impl.softsign(x)


def sigmoid(x: Any) -> Any:
    return math_ops.sigmoid(x)


def hard_sigmoid(x: Any) -> Any:
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    return clip_ops.clip_by_value(0.2 * convert_to_tensor(x) + 0.5, 0.0, 1.0)


def tanh(x: Any) -> Any:
    return math_ops.tanh(x)


def dropout(x: Any, level: float, noise_shape: Any = None, seed: int | None = None) -> Any:
    if seed is None:
        seed = np.random.randint(10_000_000)
    return nn_impl.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def l2_normalize(x: Any, axis: Any = None) -> Any:
    from flowmesh.ops.nn_norm_ops import l2_normalize as normalize

    return normalize(x, axis=axis)


def in_top_k(predictions: Any, targets: Any, k: int) -> Any:
    return nn_impl.in_top_k(predictions, targets, k)


# --- normalization ------------------------------------------------------------------------
def batch_normalization(x: Any, mean: Any, var: Any, beta: Any, gamma: Any, axis: int = -1,
                        epsilon: float = 1e-3) -> Any:
    from flowmesh.ops.nn_norm_ops import batch_normalization as normalize

    return normalize(x, mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x: Any, gamma: Any, beta: Any, reduction_axes: Any,
                                epsilon: float = 1e-3) -> tuple[Any, Any, Any]:
    """``(normalized x, mean, variance)`` over ``reduction_axes`` (``gamma``/``beta`` per
    the remaining axes, None for 1 / 0)."""
    from flowmesh.ops.nn_norm_ops import moments

    x = convert_to_tensor(x)
    axes = sorted(a % x.shape.rank for a in reduction_axes)
    mean, variance = moments(x, axes, keep_dims=True)
    kept = [d for i, d in enumerate(x.shape.as_list()) if i not in axes]
    broadcast = [1 if i in axes else -1 for i in range(x.shape.rank)]
    normed = (x - mean) * math_ops.rsqrt(variance + epsilon)
    if gamma is not None:
        normed = normed * array_ops.reshape(gamma, broadcast) if kept else normed * gamma
    if beta is not None:
        normed = normed + array_ops.reshape(beta, broadcast) if kept else normed + beta
    return normed, array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)


def bias_add(x: Any, bias: Any, data_format: str | None = None) -> Any:
    """``x + bias`` over the channel axis (``bias`` of rank 1 or ``rank(x) - 1``)."""
    fmt = data_format_or_default(data_format)
    x, bias = convert_to_tensor(x), convert_to_tensor(bias)
    if bias.shape.rank == 1:
        if fmt == "channels_last":
            return nn_ops.bias_add(x, bias)
        return x + array_ops.reshape(bias, [1, -1] + [1] * (x.shape.rank - 2))
    dims = bias.shape.as_list()
    if fmt == "channels_first":  # tf-keras reshapes (not transposes) the bias channels first
        return x + array_ops.reshape(bias, [1, dims[-1]] + dims[:-1])
    return x + array_ops.expand_dims(bias, 0)


__all__ = [
    "batch_normalization",
    "bias_add",
    "dropout",
    "elu",
    "hard_sigmoid",
    "in_top_k",
    "l2_normalize",
    "normalize_batch_in_training",
    "relu",
    "sigmoid",
    "softmax",
    "softplus",
    "softsign",
    "tanh",
]
