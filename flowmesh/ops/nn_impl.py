"""Neural-network ops, part 2: activations, dropout, top_k and in_top_k.

Activations with a TensorFlow kernel op (``Relu6``, ``Elu``, ``Selu``, ``Softplus``,
``Softsign``, ``LeakyRelu``) have a matching ``*Grad`` op whose own gradient is defined,
so second derivatives work, as in TensorFlow. ``gelu`` is one ``Gelu`` op (TensorFlow
composes it from erf/tanh; the values are the same) with a ``GeluGrad`` op whose gradient
is built from elementwise ops. ``swish``/``silu`` and ``crelu`` are compositions.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, range_ops, select_ops
from flowmesh.ops._builders import (
    FLOATS,
    REAL_NUMERIC,
    check_dtype,
    constant_value,
    make_op,
    make_tensor,
    same_shape,
)
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.nn_ops import bias_add, relu
from flowmesh.ops.random_ops import random_uniform
from flowmesh.ops.reduction_ops import reduce_mean, reduce_prod
from flowmesh.ops.segment_ops import unsorted_segment_sum

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _zeros(t: Tensor) -> Tensor:
    return array_ops.zeros_like(t)


def _activation(op_type: str, x: Any, name: str | None, allowed: Sequence[dtypes.DType] = FLOATS,
                attrs: dict[str, Any] | None = None) -> Tensor:
    t = convert_to_tensor(x, name="features")
    check_dtype(op_type, t, allowed, "features")
    return make_tensor(op_type, [t], attrs, name=name or op_type)


# --- Relu6 ---------------------------------------------------------------------------------
register_op("Relu6", same_shape, grad=lambda op, g: [make_tensor("Relu6Grad", [g, op.inputs[0]])])
register_op("Relu6Grad", same_shape,
            grad=lambda op, g: [make_tensor("Relu6Grad", [g, op.inputs[1]]), _zeros(op.inputs[1])])


def relu6(features: Any, name: str | None = None) -> Tensor:
    """``min(max(features, 0), 6)``.

    Args:
        features: a real-valued (floating or integer) tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` has another dtype.
    """
    return _activation("Relu6", features, name, REAL_NUMERIC)


# --- Elu / Selu ----------------------------------------------------------------------------
def _elu_grad_grad(op: Any, g: Tensor) -> list:
    dy, y = op.inputs
    return [make_tensor("EluGrad", [g, y]), select_ops.where(math_ops.less(y, 0.0), g * dy, _zeros(y))]


def _selu_grad_grad(op: Any, g: Tensor) -> list:
    dy, y = op.inputs
    return [make_tensor("SeluGrad", [g, y]), select_ops.where(math_ops.less(y, 0.0), g * dy, _zeros(y))]


register_op("Elu", same_shape, grad=lambda op, g: [make_tensor("EluGrad", [g, op.outputs[0]])])
register_op("EluGrad", same_shape, grad=_elu_grad_grad)
register_op("Selu", same_shape, grad=lambda op, g: [make_tensor("SeluGrad", [g, op.outputs[0]])])
register_op("SeluGrad", same_shape, grad=_selu_grad_grad)


def elu(features: Any, name: str | None = None) -> Tensor:
    """``features`` if > 0 else ``exp(features) - 1``.

    Args:
        features: a float16/bfloat16/float32/float64 tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` has another dtype.
    """
    return _activation("Elu", features, name)


def selu(features: Any, name: str | None = None) -> Tensor:
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))`` with the SELU constants.

    Args:
        features: a float16/bfloat16/float32/float64 tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` has another dtype.
    """
    return _activation("Selu", features, name)


# --- Softplus / Softsign -------------------------------------------------------------------
def _softplus_grad_grad(op: Any, g: Tensor) -> list:
    dy, x = op.inputs
    ddy = make_tensor("SoftplusGrad", [g, x])
    d2x = g * dy / (math_ops.exp(math_ops.negative(x)) + 2.0 + math_ops.exp(x))
    return [ddy, d2x]


def _softsign_grad_grad(op: Any, g: Tensor) -> list:
    dy, x = op.inputs
    denom = 1.0 + math_ops.abs(x)
    d2x = g * dy * (-2.0 * math_ops.sign(x)) / (denom * denom * denom)
    return [make_tensor("SoftsignGrad", [g, x]), d2x]


register_op("Softplus", same_shape, grad=lambda op, g: [make_tensor("SoftplusGrad", [g, op.inputs[0]])])
register_op("SoftplusGrad", same_shape, grad=_softplus_grad_grad)
register_op("Softsign", same_shape, grad=lambda op, g: [make_tensor("SoftsignGrad", [g, op.inputs[0]])])
register_op("SoftsignGrad", same_shape, grad=_softsign_grad_grad)


def softplus(features: Any, name: str | None = None) -> Tensor:
    """``log(exp(features) + 1)``, computed stably.

    Args:
        features: a float16/bfloat16/float32/float64 tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` has another dtype.
    """
    return _activation("Softplus", features, name)


def softsign(features: Any, name: str | None = None) -> Tensor:
    """``features / (abs(features) + 1)``.

    Args:
        features: a float16/bfloat16/float32/float64 tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` has another dtype.
    """
    return _activation("Softsign", features, name)


# --- LeakyRelu -----------------------------------------------------------------------------
def _leaky_grad(op: Any, g: Tensor) -> list:
    return [make_tensor("LeakyReluGrad", [g, op.inputs[0]], {"alpha": op.attrs["alpha"]})]


def _leaky_grad_grad(op: Any, g: Tensor) -> list:
    x = op.inputs[1]
    return [make_tensor("LeakyReluGrad", [g, x], {"alpha": op.attrs["alpha"]}), _zeros(x)]


register_op("LeakyRelu", same_shape, grad=_leaky_grad)
register_op("LeakyReluGrad", same_shape, grad=_leaky_grad_grad)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """``features`` if > 0 else ``alpha * features``; integer inputs are cast to float32.

    Args:
        features: a floating or integer tensor.
        alpha: the slope for negative inputs.
        name: the op name.

    Returns:
        A floating tensor of the shape of ``features``.
    """
    with name_scope(name, "LeakyRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        if x.dtype.is_integer:
            x = cast_ops.cast(x, dtypes.float32)
        check_dtype("LeakyRelu", x, FLOATS, "features")
        return make_tensor("LeakyRelu", [x], {"alpha": float(alpha)}, name=scope)


# --- Gelu ------------------------------------------------------------------------------------
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_COEFF = 0.044715


def _gelu_second_derivative(x: Tensor, approximate: bool) -> Tensor:
    """``d^2 gelu / dx^2`` from elementwise ops (so higher orders work too)."""
    if not approximate:
        pdf = math_ops.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
        return pdf * (2.0 - x * x)
    x2 = x * x
    t = math_ops.tanh(_SQRT_2_OVER_PI * (x + _GELU_COEFF * x2 * x))
    du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_COEFF * x2)
    sech2 = 1.0 - t * t
    return sech2 * (du + 3.0 * _GELU_COEFF * _SQRT_2_OVER_PI * x2 - x * t * du * du)


def _gelu_grad_grad(op: Any, g: Tensor) -> list:
    dy, x = op.inputs
    attrs = {"approximate": op.attrs["approximate"]}
    return [make_tensor("GeluGrad", [g, x], attrs), g * dy * _gelu_second_derivative(x, op.attrs["approximate"])]


register_op("Gelu", same_shape,
            grad=lambda op, g: [make_tensor("GeluGrad", [g, op.inputs[0]], {"approximate": op.attrs["approximate"]})])
register_op("GeluGrad", same_shape, grad=_gelu_grad_grad)


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)`` (or its tanh approximation).

    Args:
        features: a floating tensor.
        approximate: use ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` is not floating.
    """
    return _activation("Gelu", features, name or "Gelu", attrs={"approximate": bool(approximate)})


# --- compositions ----------------------------------------------------------------------------
def swish(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    """``features * sigmoid(beta * features)`` (a.k.a. SiLU)."""
    with name_scope(name, "swish", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        check_dtype("swish", x, FLOATS, "features")
        arg = x if beta == 1.0 else x * beta
        return math_ops.multiply(x, math_ops.sigmoid(arg), name=scope)


silu = swish


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """``concat([relu(x), relu(-x)], axis)``."""

    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return relu(array_ops.concat([x, math_ops.negative(x)], axis), name=scope)


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(sigmoid(x))`` computed stably as ``-softplus(-x)``."""
    with name_scope(name, "LogSigmoid", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        return math_ops.negative(softplus(math_ops.negative(t)), name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``."""

    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(bias_add(matmul(x, weights), biases), name=scope)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``matmul(x, weights) + biases``."""

    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return bias_add(matmul(x, weights), biases, name=scope)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value``, as a float32 scalar."""

    with name_scope(name, "zero_fraction", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        zero = math_ops.equal(x, array_ops.zeros_like(x))
        return reduce_mean(cast_ops.cast(zero, dtypes.float32), name=scope)


# --- dropout -----------------------------------------------------------------------------------
def _check_rate(rate: Any, keep_prob: Any) -> None:
    if isinstance(rate, numbers.Real) and not isinstance(rate, bool) and not 0 <= rate < 1:
        if keep_prob is not None:
            raise InvalidArgumentError(
                f"dropout: keep_prob must be a scalar tensor or a float in the range (0, 1], got "
                f"keep_prob={keep_prob}")
        raise InvalidArgumentError(
            f"dropout: rate must be a scalar tensor or a float in the range [0, 1), got rate={rate}")


def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None, rate: Any = None) -> Tensor:
    """Zeroes each element with probability ``rate`` and scales the rest by ``1 / (1 - rate)``.

    Args:
        x: a floating tensor.
        keep_prob: TensorFlow 1.x spelling: the probability of keeping an element
            (``rate = 1 - keep_prob``). Give ``keep_prob`` or ``rate``, not both.
        noise_shape: 1-D shape of the random keep/drop mask, broadcast against ``x``.
        seed: op-level seed (see ``tf.set_random_seed``).
        rate: the probability of dropping an element, in ``[0, 1)``.

    Returns:
        A tensor of the shape and dtype of ``x``.

    Raises:
        InvalidArgumentError: ``rate`` outside ``[0, 1)`` (``keep_prob`` outside ``(0, 1]``).
        ValueError: neither or both of ``rate``/``keep_prob`` given, or ``x`` not floating.
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'; use 'rate' (= 1 - keep_prob)")
    if keep_prob is None and rate is None:
        raise ValueError("dropout needs `rate` (or the TF1 `keep_prob`); received neither")
    if keep_prob is not None:
        _check_rate(1.0 - keep_prob if isinstance(keep_prob, numbers.Real) else None, keep_prob)
        rate = 1.0 - keep_prob if isinstance(keep_prob, numbers.Real) else None
        if rate is None:
            with name_scope(name, "dropout", [x]):
                rate = math_ops.subtract(1.0, convert_to_tensor(keep_prob), name="rate")
    _check_rate(rate, None)
    return dropout_with_sampler(x, rate, noise_shape, lambda shape, dtype: random_uniform(shape, dtype=dtype, seed=seed),
                                name)


def dropout_with_sampler(x: Any, rate: Any, noise_shape: Any, uniform_sampler: Any, name: str | None) -> Tensor:
    """Dropout whose keep mask is ``uniform_sampler(shape, dtype) >= rate`` (the body of
    ``dropout`` and of ``tf.nn.experimental.general_dropout`` / ``stateless_dropout``)."""
    with name_scope(name, "dropout", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        if not t.dtype.is_floating:
            raise ValueError(f"dropout: x must be a floating point tensor (it is scaled), got {t.dtype.name}")
        if isinstance(rate, numbers.Real) and rate == 0:
            return t
        if isinstance(rate, numbers.Real):
            scaled = t * convert_to_tensor(1.0 / (1.0 - rate), dtype=t.dtype)
            rate_t = convert_to_tensor(rate, dtype=t.dtype, name="rate")
        else:
            rate_t = cast_ops.cast(convert_to_tensor(rate, name="rate"), t.dtype)
            if rate_t.shape.rank not in (None, 0):
                raise InvalidArgumentError(f"dropout: rate must be a scalar, got shape {rate_t.shape}")
            scaled = math_ops.truediv(t, 1.0 - rate_t)
        shape = array_ops.shape(t) if noise_shape is None else noise_shape
        keep = math_ops.greater_equal(uniform_sampler(shape=shape, dtype=t.dtype), rate_t)
        out = select_ops.where_v2(keep, scaled, array_ops.zeros([], dtype=t.dtype), name=scope)
        if noise_shape is None:
            out.set_shape(t.shape)
        return out


# --- top_k / in_top_k --------------------------------------------------------------------------
def _k_value(k: Tensor) -> int | None:
    value = constant_value(k)
    return None if value is None else int(value)


def _top_k_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, k_t = inputs
    k = _k_value(k_t)
    if k is not None and k < 0:
        raise InvalidArgumentError(f"Need k >= 0, got {k}")
    if x.shape.rank == 0:
        raise InvalidArgumentError("input must be >= 1-D, got a scalar")
    if x.shape.rank is None:
        shape = TensorShape(None)
    else:
        dims = x.shape.as_list()
        if k is not None and dims[-1] is not None and dims[-1] < k:
            raise InvalidArgumentError(f"input must have at least k columns. Had {dims[-1]}, needed {k}")
        shape = TensorShape(dims[:-1] + [k])
    return [(x.dtype, shape), (attrs.get("index_type", dtypes.int32), shape)]


def _top_k_grad(op: Any, grad_values: Tensor, grad_indices: Tensor) -> list:
    """Scatters the values' gradient back to the positions the values came from."""

    x, indices = op.inputs[0], op.outputs[1]
    in_shape = array_ops.shape(x)
    in_last = array_ops.shape(x)[-1]
    k_last = array_ops.shape(indices)[-1]
    rows = array_ops.reshape(indices, array_ops.stack([-1, k_last]))
    offsets = range_ops.range(0, array_ops.shape(rows)[0] * in_last, in_last)
    flat = array_ops.reshape(rows + array_ops.expand_dims(offsets, -1), [-1])
    total = reduce_prod(in_shape)
    summed = unsorted_segment_sum(array_ops.reshape(grad_values, [-1]), flat, total)
    return [array_ops.reshape(summed, in_shape), None]


register_op("TopKV2", _top_k_shape, grad=_top_k_grad)


def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = dtypes.int32,  # noqa: A002
          name: str | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest entries of the last dimension and their indices.

    Equal values keep their original order (the lower index first), as in TensorFlow.
    Values are always returned sorted (allowed for ``sorted=False``, whose order is
    unspecified).

    Args:
        input: a real-valued tensor of rank >= 1.
        k: int or scalar int32 tensor.
        sorted: accepted for compatibility (results are always sorted).
        index_type: dtype of the returned indices (int32 or int64).

    Returns:
        ``(values, indices)``, both of shape ``input.shape[:-1] + [k]``; the gradient
        flows from ``values`` back to the selected positions.

    Raises:
        InvalidArgumentError: ``k < 0`` or the last dimension is shorter than ``k``.
    """
    x = convert_to_tensor(input, name="input")
    check_dtype("TopKV2", x, REAL_NUMERIC, "input")
    k_t = convert_to_tensor(k, dtype=dtypes.int32, name="k")
    attrs = {"sorted": bool(sorted), "index_type": dtypes.as_dtype(index_type)}
    op = make_op("TopKV2", [x, k_t], attrs, name=name or "TopKV2")
    return op.outputs[0], op.outputs[1]


def _in_top_k_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    predictions, targets, k = inputs
    if predictions.shape.rank not in (None, 2):
        raise InvalidArgumentError(f"predictions must be 2-dimensional, got shape {predictions.shape}")
    if targets.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"targets must be 1-dimensional, got shape {targets.shape}")
    batch = predictions.shape.as_list()[0] if predictions.shape.rank == 2 else None
    t_batch = targets.shape.as_list()[0] if targets.shape.rank == 1 else None
    if batch is not None and t_batch is not None and batch != t_batch:
        raise InvalidArgumentError(
            f"First dimension of predictions {batch} must match length of targets {t_batch}")
    return [(dtypes.bool, TensorShape([batch if batch is not None else t_batch]))]


register_op("InTopKV2", _in_top_k_shape, not_differentiable=True)


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether each target's prediction is among the ``k`` largest of its row.

    Ties count in the target's favour; a row with a non-finite prediction (or an
    out-of-range target) gives False, as in TensorFlow.

    Args:
        predictions: ``[batch, classes]`` floating scores.
        targets: ``[batch]`` int32/int64 class ids.
        k: how many top entries count.
        name: the op name.

    Returns:
        A ``[batch]`` bool tensor.

    Raises:
        InvalidArgumentError: predictions not 2-D, targets not 1-D or batch sizes differ.
        TypeError: bad dtypes.
    """
    p = convert_to_tensor(predictions, name="predictions")
    check_dtype("InTopKV2", p, (dtypes.float32, dtypes.float16, dtypes.float64, dtypes.bfloat16),
                "predictions")
    t = convert_to_tensor(targets, name="targets")
    check_dtype("InTopKV2", t, (dtypes.int32, dtypes.int64), "targets")
    k_t = convert_to_tensor(k, dtype=t.dtype, name="k")
    return make_tensor("InTopKV2", [p, t, k_t], name=name or "InTopKV2")


__all__ = [
    "crelu", "dropout", "elu", "gelu", "in_top_k", "leaky_relu", "log_sigmoid", "relu6",
    "relu_layer", "selu", "silu", "softplus", "softsign", "swish", "top_k", "xw_plus_b",
    "zero_fraction",
]
