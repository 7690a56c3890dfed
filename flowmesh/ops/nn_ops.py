"""Neural-network ops, part 1: activations, softmax, bias_add and the cross-entropy family.

Convolutions, pooling, normalization, dropout and the rest are in ``nn_conv_ops.py``,
``nn_norm_ops.py`` ... (see ``flowmesh/nn.py`` for the public ``tf.nn`` namespace).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, select_ops
from flowmesh.ops._builders import (
    FLOATS,
    INDEX_TYPES,
    REAL_NUMERIC,
    check_dtype,
    make_op,
    make_tensor,
    same_shape,
)
from flowmesh.ops.reduction_ops import reduce_sum


# --- Relu ----------------------------------------------------------------------------------
def _relu_grad(op: Any, grad: Tensor) -> list:
    return [make_tensor("ReluGrad", [grad, op.outputs[0]])]


register_op("Relu", same_shape, grad=_relu_grad)
register_op(
    "ReluGrad", same_shape,
    grad=lambda op, g: [make_tensor("ReluGrad", [g, op.inputs[1]]), array_ops.zeros_like(op.inputs[1])],
)


def relu(features: Any, name: str | None = None) -> Tensor:
    """``max(features, 0)``.

    Args:
        features: a real-valued tensor.
        name: the op name.

    Returns:
        A tensor of the shape and dtype of ``features``.

    Raises:
        TypeError: ``features`` is not real-valued.
    """
    x = convert_to_tensor(features, name="features")
    check_dtype("Relu", x, REAL_NUMERIC, "features")
    return make_tensor("Relu", [x], name=name or "Relu")


# --- BiasAdd ---------------------------------------------------------------------------------
def _bias_add_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    value, bias = inputs
    if bias.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"Biases must be 1D: {bias.shape}")
    if value.shape.rank is not None and value.shape.rank < 2:
        raise InvalidArgumentError(f"Input tensor must be at least 2D: {value.shape}")
    if value.dtype != bias.dtype:
        raise TypeError(f"BiasAdd value {value.dtype.name} and bias {bias.dtype.name} dtypes differ")
    if value.shape.rank is not None and bias.shape.rank == 1:
        channel = -1 if attrs.get("data_format", "NHWC") == "NHWC" else 1
        c, b = value.shape.as_list()[channel], bias.shape.as_list()[0]
        if c is not None and b is not None and c != b:
            raise InvalidArgumentError(f"Must provide as many biases as the channel dimension: {b} vs {c}")
    return [(value.dtype, value.shape)]


def _bias_add_grad(op: Any, grad: Tensor) -> list:
    return [grad, make_tensor("BiasAddGrad", [grad], {"data_format": op.attrs["data_format"]})]


def _bias_add_grad_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    g = inputs[0]
    if g.shape.rank is None:
        return [(g.dtype, TensorShape([None]))]
    channel = -1 if attrs["data_format"] == "NHWC" else 1
    return [(g.dtype, TensorShape([g.shape.as_list()[channel]]))]


def _bias_add_grad_grad(op: Any, g: Tensor) -> list:
    x = op.inputs[0]
    if op.attrs["data_format"] == "NHWC":
        return [array_ops.zeros_like(x) + g]
    if x.shape.rank is not None:
        shape: Any = [1, -1] + [1] * (x.shape.rank - 2)
    else:
        ones = array_ops.fill(array_ops.expand_dims(array_ops.rank(x) - 2, 0), 1)
        shape = array_ops.concat([[1, -1], ones], 0)
    return [array_ops.zeros_like(x) + array_ops.reshape(g, shape)]


register_op("BiasAdd", _bias_add_shape, grad=_bias_add_grad)
register_op("BiasAddGrad", _bias_add_grad_shape, grad=_bias_add_grad_grad)


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """Adds a 1-D ``bias`` along the channel dimension of ``value``.

    Args:
        value: a tensor of rank >= 2.
        bias: 1-D, as many elements as ``value``'s channel dimension.
        data_format: ``"NHWC"`` (channels last, default) or ``"NCHW"`` (channels second).

    Returns:
        ``value + bias`` broadcast along the channel dimension.

    Raises:
        InvalidArgumentError: unknown data_format, or bias/channel sizes differ (at graph
            construction when shapes are known, else at run time).
    """
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW", "N...C", "NC..."):
        raise InvalidArgumentError(f"Unknown data_format {data_format!r}; use 'NHWC' or 'NCHW'")
    fmt = "NHWC" if fmt in ("NHWC", "N...C") else "NCHW"
    x = convert_to_tensor(value)
    b = convert_to_tensor(bias, dtype=x.dtype)
    return make_tensor("BiasAdd", [x, b], {"data_format": fmt}, name=name or "BiasAdd")


# --- Softmax / LogSoftmax --------------------------------------------------------------------
def _softmax_grad(op: Any, grad: Tensor) -> list:
    y = op.outputs[0]

    return [(grad - reduce_sum(grad * y, -1, keepdims=True)) * y]


def _log_softmax_grad(op: Any, grad: Tensor) -> list:
    return [grad - math_ops.exp(op.outputs[0]) * reduce_sum(grad, -1, keepdims=True)]


register_op("Softmax", same_shape, grad=_softmax_grad)
register_op("LogSoftmax", same_shape, grad=_log_softmax_grad)


def _softmax_like(op_type: str, logits: Any, axis: int, name: str | None) -> Tensor:
    x = convert_to_tensor(logits)
    check_dtype(op_type, x, FLOATS, "logits")
    rank = x.shape.rank
    if axis in (-1, None) or (rank is not None and axis == rank - 1):
        return make_tensor(op_type, [x], name=name or op_type)
    if rank is None:
        raise ValueError(f"{op_type} over axis {axis} needs a known rank")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = array_ops.transpose(x, perm)
    return array_ops.transpose(make_tensor(op_type, [moved]), perm, name=name or op_type)


def softmax(logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """``exp(logits) / sum(exp(logits), axis)``, computed stably.

    Args:
        logits: a floating tensor.
        axis: the axis to normalize (default -1; ``dim`` is the TF1 spelling).

    Returns:
        A tensor of the shape and dtype of ``logits``.

    Raises:
        TypeError: ``logits`` is not floating.
    """
    return _softmax_like("Softmax", logits, -1 if axis is None and dim is None else (axis if axis is not None else dim), name)


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """``logits - log(sum(exp(logits), axis))``, computed stably."""
    return _softmax_like("LogSoftmax", logits, -1 if axis is None and dim is None else (axis if axis is not None else dim), name)


# --- cross entropy ---------------------------------------------------------------------------
def _xent_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    logits, labels = inputs
    if logits.shape.rank not in (None, 2):
        raise InvalidArgumentError(f"logits must be 2-dimensional, got shape {logits.shape}")
    logits.shape.assert_is_compatible_with(labels.shape)
    batch = logits.shape.as_list()[0] if logits.shape.rank == 2 else None
    return [(logits.dtype, TensorShape([batch])), (logits.dtype, logits.shape)]


def _is_zeros(t: Tensor | None) -> bool:
    """True for None and for the zeros autodiff fills in for unused outputs."""
    return t is None or t.op.type == "ZerosLike"


def _softmax_hvp(grad_backprop: Tensor, logits: Tensor) -> Tensor:
    """``d(softmax(logits)) / d logits`` applied to ``grad_backprop`` (for second order)."""

    probs = softmax(logits)
    inner = reduce_sum(grad_backprop * probs, -1, keepdims=True)
    return (grad_backprop - inner) * probs


def _xent_grad(op: Any, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    """``backprop = softmax(logits) - labels`` is output 1; it carries second-order terms."""
    logits = op.inputs[0]
    g = array_ops.expand_dims(grad_loss, -1)
    grad_logits = g * op.outputs[1]
    grad_labels = g * math_ops.negative(log_softmax(logits))
    if not _is_zeros(grad_backprop):
        grad_logits = grad_logits + _softmax_hvp(grad_backprop, logits)
        grad_labels = grad_labels - grad_backprop
    return [grad_logits, grad_labels]


register_op("SoftmaxCrossEntropyWithLogits", _xent_shape, grad=_xent_grad)


def _sparse_xent_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    logits, labels = inputs
    if logits.shape.rank not in (None, 2):
        raise InvalidArgumentError(f"logits must be 2-D, but got shape {logits.shape}")
    if labels.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"labels must be 1-D, but got shape {labels.shape}")
    if labels.dtype not in INDEX_TYPES:
        raise TypeError(f"labels must be int32 or int64, got {labels.dtype.name}")
    batch = logits.shape.as_list()[0] if logits.shape.rank == 2 else None
    if labels.shape.rank == 1 and batch is not None and labels.shape.as_list()[0] not in (None, batch):
        raise InvalidArgumentError(
            f"logits and labels must have the same first dimension, got logits shape {logits.shape} "
            f"and labels shape {labels.shape}"
        )
    return [(logits.dtype, TensorShape([batch])), (logits.dtype, logits.shape)]


def _sparse_xent_grad(op: Any, grad_loss: Tensor, grad_backprop: Tensor) -> list:
    grad_logits = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zeros(grad_backprop):
        grad_logits = grad_logits + _softmax_hvp(grad_backprop, op.inputs[0])
    return [grad_logits, None]


register_op("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_shape, grad=_sparse_xent_grad)


def _flatten_to_2d(logits: Tensor) -> tuple[Tensor, Any]:
    if logits.shape.rank == 2:
        return logits, None
    original = array_ops.shape(logits)
    last = array_ops.shape(logits)[-1]
    return array_ops.reshape(logits, array_ops.stack([-1, last])), original


def softmax_cross_entropy_with_logits_v2(labels: Any = None, logits: Any = None, axis: int = -1,
                                         name: str | None = None, dim: int | None = None,
                                         _sentinel: Any = None) -> Tensor:
    """Cross entropy between ``labels`` (a distribution) and ``softmax(logits)``, per row.

    Gradients flow into both ``logits`` and ``labels``.
    """
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call softmax_cross_entropy_with_logits with named arguments (labels=..., logits=...)")
    with name_scope(name, "softmax_cross_entropy_with_logits") as scope:
        lg = convert_to_tensor(logits, name="logits")
        check_dtype("SoftmaxCrossEntropyWithLogits", lg, FLOATS, "logits")
        lb = convert_to_tensor(labels, name="labels")
        if lb.dtype != lg.dtype:  # TensorFlow casts the labels to the logits' dtype
            lb = cast_ops.cast(lb, lg.dtype)
        if lg.shape.rank is not None and lb.shape.rank is not None:
            lg.shape.assert_is_compatible_with(lb.shape)
        axis = dim if dim is not None else axis
        if axis not in (-1, (lg.shape.rank or 0) - 1):
            if lg.shape.rank is None:
                raise ValueError(f"softmax_cross_entropy_with_logits over axis {axis} needs logits of known rank")
            perm = list(range(lg.shape.rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            lg, lb = array_ops.transpose(lg, perm), array_ops.transpose(lb, perm)
        batch_shape = None
        if lg.shape.rank != 2:
            batch_shape = array_ops.shape(lg)[:-1]
            lg, _ = _flatten_to_2d(lg)
            lb, _ = _flatten_to_2d(lb)
        loss = make_op("SoftmaxCrossEntropyWithLogits", [lg, lb]).outputs[0]
        if batch_shape is not None:
            return array_ops.reshape(loss, batch_shape, name=scope)
        return array_ops.identity(loss, name=scope)


def softmax_cross_entropy_with_logits(labels: Any = None, logits: Any = None, dim: int = -1,
                                      name: str | None = None, axis: int | None = None,
                                      _sentinel: Any = None) -> Tensor:
    """Like the ``_v2`` variant, but no gradient flows into ``labels`` (TensorFlow 1.x)."""
    with name_scope(name, "softmax_cross_entropy_with_logits_sg") as scope:
        lb = array_ops.stop_gradient(convert_to_tensor(labels), name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(
            labels=lb, logits=logits, axis=dim if axis is None else axis, name=scope, _sentinel=_sentinel)


def sparse_softmax_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                             name: str | None = None, _sentinel: Any = None) -> Tensor:
    """Cross entropy of integer class ``labels`` against ``softmax(logits)``, per example.

    Raises:
        InvalidArgumentError: (at run time) a label is outside ``[0, num_classes)``.
    """
    if _sentinel is not None or labels is None or logits is None:
        raise ValueError("Only call sparse_softmax_cross_entropy_with_logits with named arguments")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits") as scope:
        lg = convert_to_tensor(logits, name="logits")
        lb = convert_to_tensor(labels, name="labels")
        check_dtype("SparseSoftmaxCrossEntropyWithLogits", lg, FLOATS, "logits")
        if lg.shape.rank is not None and lb.shape.rank is not None and lb.shape.rank != lg.shape.rank - 1:
            raise ValueError(
                f"Rank mismatch: Rank of labels (received {lb.shape.rank}) should equal rank of "
                f"logits minus 1 (received {lg.shape.rank})."
            )
        if lg.shape.rank == 2:
            return make_op("SparseSoftmaxCrossEntropyWithLogits", [lg, lb], name=scope).outputs[0]
        labels_shape = array_ops.shape(lb)
        flat_logits, _ = _flatten_to_2d(lg)
        flat_labels = array_ops.reshape(lb, [-1])
        loss = make_op("SparseSoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels]).outputs[0]
        return array_ops.reshape(loss, labels_shape, name=scope)


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None,
                                      _sentinel: Any = None) -> Tensor:
    """``max(x, 0) - x * z + log(1 + exp(-abs(x)))``: stable logistic loss per element."""
    with name_scope(name, "logistic_loss") as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype, name="labels")
        x.shape.assert_is_compatible_with(z.shape)
        zeros = array_ops.zeros_like(x)
        relu_logits = select_ops.where(math_ops.greater_equal(x, zeros), x, zeros)
        neg_abs = select_ops.where(math_ops.greater_equal(x, zeros), math_ops.negative(x), x)
        return math_ops.add(relu_logits - x * z, math_ops.log1p(math_ops.exp(neg_abs)), name=scope)


def weighted_cross_entropy_with_logits(labels: Any = None, logits: Any = None, pos_weight: Any = None,
                                       name: str | None = None, targets: Any = None) -> Tensor:
    """Sigmoid cross entropy with positive examples weighted by ``pos_weight``.

    ``(1 - z) * x + (1 + (pos_weight - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))``,
    computed stably (``targets`` is the TF1 spelling of ``labels``).
    """
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("weighted_cross_entropy_with_logits needs labels, logits and pos_weight")
    with name_scope(name, "logistic_loss") as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype, name="labels")
        x.shape.assert_is_compatible_with(z.shape)
        log_weight = 1.0 + (convert_to_tensor(pos_weight, dtype=x.dtype) - 1.0) * z
        softplus_neg = math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(x)))) + relu(math_ops.negative(x))
        return math_ops.add((1.0 - z) * x, log_weight * softplus_neg, name=scope)
