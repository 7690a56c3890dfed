"""``tf.losses``: weighted losses reduced by a :class:`Reduction`, and the LOSSES collection.

Every loss function computes per-element losses, multiplies them by ``weights``
(broadcastable to the losses) and reduces them (default ``SUM_BY_NONZERO_WEIGHTS``: the
weighted sum divided by the number of non-zero weights), in float32, then casts back to
the input dtype and adds the result to ``loss_collection`` (``GraphKeys.LOSSES``), as in
TensorFlow 1.x.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor, add_to_collection, get_collection, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, range_ops, select_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.nn_ops import (
    relu,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from flowmesh.ops.reduction_ops import reduce_sum


class Reduction:
    """How a weighted loss is reduced to a scalar (TensorFlow 1.x ``tf.losses.Reduction``)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key!r}. Key should be one of {cls.all()}.")


# --- the LOSSES collection ---------------------------------------------------------------------
def add_loss(loss: Any, loss_collection: str | None = GraphKeys.LOSSES) -> None:
    """Adds ``loss`` to ``loss_collection`` (nothing when the collection is None)."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list[Tensor]:
    """The losses in ``loss_collection`` whose names match ``scope``."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Tensor]:
    """The tensors in ``GraphKeys.REGULARIZATION_LOSSES`` (e.g. from variable regularizers)."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses, or a constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)

    return constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: str | None = None) -> Tensor:
    """The sum of the collected losses (plus regularization losses).

    Raises:
        ValueError: there are no losses to add.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found: add losses with tf.losses.* functions or tf.losses.add_loss")
    return math_ops.add_n(losses, name=name)


# --- weighting and reduction -------------------------------------------------------------------
def _check_broadcastable(weights: Tensor, losses: Tensor) -> None:
    w, v = weights.shape, losses.shape
    if w.rank is None or v.rank is None or w.rank == 0:
        return
    if w.rank > v.rank:
        raise InvalidArgumentError(
            f"weights can not be broadcast to values: weights shape {w}, values shape {v}")
    for a, b in zip(w.as_list(), v.as_list()[v.rank - w.rank:]):
        if a is not None and b is not None and a not in (1, b):
            raise InvalidArgumentError(
                f"weights can not be broadcast to values: weights shape {w}, values shape {v}")


def _num_present(losses: Tensor, weights: Tensor) -> Tensor:
    with name_scope(None, "num_present"):
        zero = math_ops.equal(weights, 0.0)
        present = select_ops.where(zero, array_ops.zeros_like(weights), array_ops.ones_like(weights))
        present = present * array_ops.ones_like(losses)
        return reduce_sum(present)


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements"):
        return cast_ops.cast(array_ops.size(losses), losses.dtype)


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weights ``losses`` and reduces them per ``reduction``.

    Args:
        losses: per-element losses.
        weights: scalar or tensor broadcastable to ``losses``.
        loss_collection: collection the result is added to (None: not added).
        reduction: a :class:`Reduction` key.

    Returns:
        A scalar of the dtype of ``losses`` (``losses``' shape for ``Reduction.NONE``).

    Raises:
        ValueError: unknown reduction; InvalidArgumentError: weights not broadcastable.
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss"):
        values = convert_to_tensor(losses)
        values.graph.last_loss_reduction = reduction  # tf.distribute.get_loss_reduction reads it
        input_dtype = values.dtype
        values = cast_ops.cast(values, dtypes.float32)
        w = cast_ops.cast(convert_to_tensor(weights), dtypes.float32)
        _check_broadcastable(w, values)
        weighted = math_ops.multiply(values, w)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = math_ops.div_no_nan(loss, reduce_sum(array_ops.ones_like(values) * w), name="value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = math_ops.div_no_nan(loss, _num_present(values, w), name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = math_ops.div_no_nan(loss, _num_elements(values), name="value")
        loss = cast_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# --- the losses --------------------------------------------------------------------------------
def _require(**args: Any) -> None:
    for key, value in args.items():
        if value is None:
            raise ValueError(f"Argument `{key}` must not be None.")


def _float_pair(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    p = cast_ops.cast(convert_to_tensor(predictions), dtypes.float32)
    lb = cast_ops.cast(convert_to_tensor(labels), dtypes.float32)
    p.shape.assert_is_compatible_with(lb.shape)
    return lb, p


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                       loss_collection: str | None = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``(predictions - labels) ** 2``, reduced (computed in float32).

    The other loss functions of this module take the same arguments.

    Args:
        labels: the targets; cast to float32.
        predictions: same shape as ``labels``; cast to float32.
        weights: scalar or tensor broadcastable to the losses (0 masks an element).
        scope: name scope of the ops.
        loss_collection: collection the loss is added to (None: not collected).
        reduction: a :class:`Reduction` key (default: sum over non-zero weights).

    Returns:
        The reduced loss (float32 scalar; per-element for ``Reduction.NONE``).

    Raises:
        ValueError: labels/predictions None, incompatible shapes, unknown reduction or
            weights that do not broadcast.
    """
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error") as sc:
        lb, p = _float_pair(labels, predictions)
        losses = math_ops.squared_difference(p, lb)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                        loss_collection: str | None = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``abs(predictions - labels)``, reduced (float32)."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference") as sc:
        lb, p = _float_pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(p, lb))
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0,
               scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Quadratic for errors below ``delta``, linear above."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss") as sc:
        lb, p = _float_pair(labels, predictions)
        error = math_ops.subtract(p, lb)
        abs_error = math_ops.abs(error)
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def log_loss(labels: Any, predictions: Any, weights: Any = 1.0, epsilon: float = 1e-7,
             scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Binary cross entropy of probabilities ``predictions`` against ``labels``."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss") as sc:
        lb, p = _float_pair(labels, predictions)
        losses = (math_ops.negative(lb * math_ops.log(p + epsilon))
                  - (1.0 - lb) * math_ops.log(1.0 - p + epsilon))
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def hinge_loss(labels: Any, logits: Any, weights: Any = 1.0, scope: str | None = None,
               loss_collection: str | None = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """``max(0, 1 - (2 * labels - 1) * logits)`` for labels in {0, 1}."""

    _require(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss") as sc:
        lb, lg = _float_pair(labels, logits)
        signs = 2.0 * lb - 1.0
        losses = relu(1.0 - signs * lg)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def cosine_distance(labels: Any, predictions: Any, axis: int | None = None, weights: Any = 1.0,
                    scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
                    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS, dim: int | None = None) -> Tensor:
    """``1 - sum(labels * predictions, axis)`` for unit-normalized inputs."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss") as sc:
        lb, p = _float_pair(labels, predictions)
        losses = 1.0 - reduce_sum(p * lb, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: str | None = None, loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross entropy of one-hot ``onehot_labels`` (optionally smoothed)."""

    _require(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss") as sc:
        lg = convert_to_tensor(logits)
        lb = cast_ops.cast(convert_to_tensor(onehot_labels), lg.dtype)
        lg.shape.assert_is_compatible_with(lb.shape)
        if label_smoothing > 0:
            classes = cast_ops.cast(array_ops.shape(lb)[-1], lg.dtype)
            lb = lb * (1.0 - label_smoothing) + label_smoothing / classes
        lb = array_ops.stop_gradient(lb, name="labels_stop_gradient")
        losses = softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def _squeeze_last(t: Tensor, expected_rank: int | None) -> Tensor:
    if t.shape.rank is not None and expected_rank is not None and t.shape.rank == expected_rank + 1 \
            and t.shape.as_list()[-1] in (1, None):
        return array_ops.squeeze(t, [-1])
    return t


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0, scope: str | None = None,
                                 loss_collection: str | None = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sparse softmax cross entropy; ``labels`` of shape ``[batch]`` or ``[batch, 1]``."""

    _require(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss") as sc:
        lg = convert_to_tensor(logits)
        lb = convert_to_tensor(labels)
        expected = None if lg.shape.rank is None else lg.shape.rank - 1
        lb = _squeeze_last(lb, expected)
        w = convert_to_tensor(weights)
        if w.shape.rank not in (None, 0):
            w = _squeeze_last(w, lb.shape.rank)
        losses = sparse_softmax_cross_entropy_with_logits(labels=lb, logits=lg, name="xentropy")
        return compute_weighted_loss(losses, w, sc, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sigmoid cross entropy of ``multi_class_labels`` in [0, 1] (optionally smoothed)."""

    _require(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss") as sc:
        lg = convert_to_tensor(logits)
        lb = cast_ops.cast(convert_to_tensor(multi_class_labels), lg.dtype)
        lg.shape.assert_is_compatible_with(lb.shape)
        if label_smoothing > 0:
            lb = lb * (1.0 - label_smoothing) + 0.5 * label_smoothing
        losses = sigmoid_cross_entropy_with_logits(labels=lb, logits=lg, name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
    "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss",
    "hinge_loss", "huber_loss", "log_loss", "mean_squared_error", "sigmoid_cross_entropy",
    "softmax_cross_entropy", "sparse_softmax_cross_entropy",
]


def mean_pairwise_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                                loss_collection: str | None = GraphKeys.LOSSES) -> Tensor:
    """The mean over pairs of elements of each sample of the squared difference between
    the prediction pair's and the label pair's differences, weighted per sample and summed
    over the batch (TensorFlow's formula: ``2 sum(d^2)/(n-1) - 2 (sum d)^2/(n(n-1))`` with
    ``d = predictions - labels`` and ``n`` the present elements).

    Args:
        weights: a scalar or ``[batch]``-leading tensor broadcastable to the samples.

    Raises:
        ValueError: labels/predictions None or incompatible shapes.
    """
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error"):
        lb, p = _float_pair(labels, predictions)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        diffs = math_ops.subtract(p, lb)
        axis = range_ops.range(1, array_ops.rank(diffs))
        present = select_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                 array_ops.ones_like(weights)) * array_ops.ones_like(diffs)
        num_present = reduce_sum(present, axis=range_ops.range(1, array_ops.rank(present)), keepdims=True)
        sum_squares = reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
        term1 = 2.0 * math_ops.div_no_nan(sum_squares, math_ops.maximum(num_present - 1, 0), name="value")
        sum_diff = reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = 2.0 * math_ops.div_no_nan(math_ops.square(sum_diff),
                                          math_ops.maximum(num_present * (num_present - 1), 0), name="value")
        loss = reduce_sum(math_ops.multiply(term1 - term2, weights))
        from flowmesh.ops.select_ops import where

        mean_loss = where(reduce_sum(num_present) > 0, loss, array_ops.zeros_like(loss), name="value")
        if loss_collection is not None:
            add_loss(mean_loss, loss_collection)
        return mean_loss
