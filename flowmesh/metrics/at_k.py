"""Top-k streaming metrics of ``tf.compat.v1.metrics``: ``recall_at_k``, ``recall_at_top_k``,
``precision_at_k``, ``precision_at_top_k``, ``sparse_precision_at_k``,
``average_precision_at_k`` and ``sparse_average_precision_at_k``. Labels are class ids
(dense ``[batch, num_labels]``, a ``[batch]`` vector, or a SparseTensor); the counts come
from ``tf.sets`` on each row, in float64 variables named as TensorFlow names them."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.metrics._core import add_to_collections, broadcast_weights, finish, metric_variable
from flowmesh.ops import (
    array_ops,
    cast_ops,
    manip_ops,
    math_ops,
    nn_impl,
    reduction_ops,
    select_ops,
    set_ops,
    sparse_manip_ops,
    state_ops,
)
from flowmesh.ops.sparse_top_level import convert_to_tensor_or_sparse_tensor


def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _maybe_expand_labels(labels: Any, predictions: Tensor) -> Any:
    """Labels one rank short of ``predictions`` get a trailing dimension of 1."""
    with name_scope(None, "expand_labels") as scope:
        labels = convert_to_tensor_or_sparse_tensor(labels)
        p_rank = predictions.shape.rank
        if isinstance(labels, SparseTensor):
            l_rank = labels.dense_shape.shape.as_list()[0] if labels.dense_shape.shape.rank == 1 else None
            if p_rank is None or l_rank is None:
                raise ValueError("sparse labels and predictions need known ranks")
            if p_rank == l_rank + 1:
                return sparse_manip_ops.reshape(labels, array_ops.concat([labels.dense_shape, [1]], 0), name=scope)
            return labels
        l_rank = labels.shape.rank
        if p_rank is None or l_rank is None or p_rank == l_rank:
            return labels
        if p_rank == l_rank + 1:
            return array_ops.expand_dims(labels, -1, name=scope)
        raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape {predictions.shape}. "
                         "Predictions rank should be the same rank as labels rank or labels rank plus one .")


def _select_class_id(ids: Any, selected: int) -> SparseTensor:
    ids = convert_to_tensor_or_sparse_tensor(ids)
    if isinstance(ids, SparseTensor):
        return sparse_manip_ops.retain(ids, math_ops.equal(ids.values, selected))
    shape = array_ops.shape(ids, out_type=dtypes.int64)
    filled_shape = array_ops.concat([shape[:-1], [1]], 0)
    result = set_ops.set_intersection(array_ops.fill(filled_shape, cast_ops.cast(selected, dtypes.int64)), ids)
    return SparseTensor(result.indices, result.values, shape)


def _select(labels: Any, predictions_idx: Any, class_id: int | None) -> tuple[Any, Any]:
    if class_id is None:
        return labels, predictions_idx
    return _select_class_id(labels, class_id), _select_class_id(predictions_idx, class_id)


def _per_row(kind: str, labels: Any, predictions_idx: Tensor, class_id: int | None, weights: Any) -> Tensor:
    labels, predictions_idx = _select(labels, predictions_idx, class_id)
    if kind == "true_positive":
        found = set_ops.set_intersection(predictions_idx, labels)
    else:
        found = set_ops.set_difference(predictions_idx, labels, aminusb=kind == "false_positive")
    counts = cast_ops.cast(set_ops.set_size(found), dtypes.float64)
    if weights is not None:
        counts = math_ops.multiply(counts, cast_ops.cast(weights, dtypes.float64))
    return counts


def _streaming_count(kind: str, labels: Any, predictions_idx: Tensor, k: int | None, class_id: int | None,
                     weights: Any) -> tuple[Tensor, Tensor]:
    with name_scope(None, _at_k_name(kind, k, class_id)) as scope:
        counts = _per_row(kind, labels, predictions_idx, class_id, weights)
        var = metric_variable([], dtypes.float64, name=scope)
        return var, state_ops.assign_add(var, cast_ops.cast(reduction_ops.reduce_sum(counts), dtypes.float64),
                                         name="update")


def _ratio_at_top_k(default: str, other: str, labels: Any, predictions_idx: Any, k: int | None, class_id: int | None,
                    weights: Any, metrics_collections: Any, updates_collections: Any,
                    name: str | None) -> tuple[Tensor, Tensor]:
    with name_scope(name, _at_k_name(default, k, class_id)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _maybe_expand_labels(labels, predictions_idx)
        top_k_idx = cast_ops.cast(predictions_idx, dtypes.int64)
        tp, tp_update = _streaming_count("true_positive", labels, top_k_idx, k, class_id, weights)
        o, o_update = _streaming_count(other, labels, top_k_idx, k, class_id, weights)
        value = finish(metrics_collections, lambda a, b: math_ops.divide(
            a.read_value(), math_ops.add(a.read_value(), b.read_value()), name=scope.rstrip("/").split("/")[-1]),
            tp, o)
        update = math_ops.divide(tp_update, math_ops.add(tp_update, o_update), name="update")
        add_to_collections(updates_collections, update)
        return value, update


def recall_at_top_k(labels: Any, predictions_idx: Any, k: int | None = None, class_id: int | None = None,
                    weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                    name: str | None = None) -> tuple[Tensor, Tensor]:
    """Streamed recall of the top-k class ids ``predictions_idx`` (``[batch, k]``) against
    ``labels``; with ``class_id``, recall of that class only."""
    return _ratio_at_top_k("recall", "false_negative", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


def precision_at_top_k(labels: Any, predictions_idx: Any, k: int | None = None, class_id: int | None = None,
                       weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                       name: str | None = None) -> tuple[Tensor, Tensor]:
    """Streamed precision of the top-k class ids ``predictions_idx`` against ``labels``."""
    return _ratio_at_top_k("precision", "false_positive", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


def recall_at_k(labels: Any, predictions: Any, k: int, class_id: int | None = None, weights: Any = None,
                metrics_collections: Any = None, updates_collections: Any = None,
                name: str | None = None) -> tuple[Tensor, Tensor]:
    """Streamed recall@k: how many of each row's ``labels`` are among the ``k`` highest
    ``predictions`` (logits or probabilities ``[batch, num_classes]``)."""
    with name_scope(name, _at_k_name("recall", k, class_id)) as scope:
        _, top_k_idx = nn_impl.top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections, updates_collections,
                               scope)


def precision_at_k(labels: Any, predictions: Any, k: int, class_id: int | None = None, weights: Any = None,
                   metrics_collections: Any = None, updates_collections: Any = None,
                   name: str | None = None) -> tuple[Tensor, Tensor]:
    """Streamed precision@k: how many of the ``k`` highest ``predictions`` are labels."""
    with name_scope(name, _at_k_name("precision", k, class_id)) as scope:
        _, top_k_idx = nn_impl.top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                                  updates_collections, scope)


def sparse_precision_at_k(labels: Any, predictions: Any, k: int, class_id: int | None = None, weights: Any = None,
                          metrics_collections: Any = None, updates_collections: Any = None,
                          name: str | None = None) -> tuple[Tensor, Tensor]:
    """Deprecated name of :func:`precision_at_k`."""
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections, updates_collections, name)


def _expand_and_tile(labels: Any, multiple: int) -> Any:
    """``labels`` ``[..., L]`` as ``[..., multiple, L]``."""
    with name_scope(None, "expand_and_tile") as scope:
        if isinstance(labels, SparseTensor):
            rank = array_ops.reshape(array_ops.size(labels.dense_shape) - 1, [1])
            shape = array_ops.concat([manip_ops.slice(labels.dense_shape, [0], rank), [1],
                                      manip_ops.slice(labels.dense_shape, rank, [-1])], 0, name="expanded_shape")
            expanded = sparse_manip_ops.reshape(labels, shape, name="expand")
            return expanded if multiple == 1 else sparse_manip_ops.concat(-2, [expanded] * multiple, name=scope)
        expanded = array_ops.expand_dims(labels, -2, name="expand")
        if multiple == 1:
            return expanded
        ones = array_ops.ones_like(array_ops.shape(labels))
        multiples = array_ops.concat([ones[:-1], [multiple], ones[-1:]], 0, name="multiples")
        return manip_ops.tile(expanded, multiples, name=scope)


def _num_relevant(labels: Any, k: int) -> Tensor:
    with name_scope(None, "num_relevant") as scope:
        if isinstance(labels, SparseTensor):
            return math_ops.minimum(set_ops.set_size(labels), k, name=scope)
        count = reduction_ops.reduce_sum(select_ops.where_v2(math_ops.greater_equal(labels, 0),
                                                             array_ops.ones_like(labels), array_ops.zeros_like(labels)),
                                         axis=-1)
        return math_ops.minimum(count, k, name=scope)


def _average_precision_rows(labels: Any, predictions_idx: Tensor) -> Tensor:
    with name_scope(None, "average_precision") as scope:
        predictions_idx = cast_ops.cast(predictions_idx, dtypes.int64, name="predictions_idx")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, it is None.")
        labels = _maybe_expand_labels(labels, predictions_idx)
        per_k = array_ops.expand_dims(predictions_idx, -1, name="predictions_idx_per_k")
        relevant = cast_ops.cast(set_ops.set_size(set_ops.set_intersection(per_k, _expand_and_tile(labels, k))),
                                 dtypes.float64)
        tp_per_k = reduction_ops.cumsum(relevant, axis=-1, name="tp_per_k")
        retrieved = reduction_ops.cumsum(array_ops.ones_like(relevant), axis=-1, name="retrieved_per_k")
        precision = math_ops.divide(tp_per_k, retrieved, name="precision_per_k")
        total = reduction_ops.reduce_sum(math_ops.multiply(precision, relevant), axis=(-1,), name="precision_sum")
        return math_ops.divide(total, cast_ops.cast(_num_relevant(labels, k), dtypes.float64), name=scope)


def _clean_out_of_range(labels: Any, num_classes: Tensor) -> Any:
    """Ids >= ``num_classes`` become -1 (never relevant, never counted)."""
    values = labels.values if isinstance(labels, SparseTensor) else labels
    too_big = math_ops.greater_equal(reduction_ops.reduce_max(values), num_classes)
    cleaned = select_ops.where_v2(math_ops.logical_and(too_big, math_ops.greater_equal(values, num_classes)),
                                  -1 * array_ops.ones_like(values), values)
    return SparseTensor(labels.indices, cleaned, labels.dense_shape) if isinstance(labels, SparseTensor) else cleaned


def average_precision_at_k(labels: Any, predictions: Any, k: int, weights: Any = None,
                           metrics_collections: Any = None, updates_collections: Any = None,
                           name: str | None = None) -> tuple[Tensor, Tensor]:
    """Streamed mean average precision@k of the ``k`` highest ``predictions`` against each
    row's ``labels`` (the mean of each row's AP, weighted by ``weights``)."""
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with name_scope(name, _at_k_name("average_precision", k)) as scope:
        predictions = convert_to_tensor(predictions)
        _, predictions_idx = nn_impl.top_k(predictions, k)
        labels = convert_to_tensor_or_sparse_tensor(labels)
        labels = _clean_out_of_range(labels, cast_ops.cast(array_ops.shape(predictions)[-1], dtypes.int64))
        ap = _average_precision_rows(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(cast_ops.cast(weights, dtypes.float64), ap)
            ap = math_ops.multiply(ap, weights)
        with name_scope(None, "max") as max_scope:
            max_var = metric_variable([], dtypes.float64, name=max_scope)
            batch_max = (cast_ops.cast(array_ops.size(ap, name="batch_max"), dtypes.float64) if weights is None
                         else reduction_ops.reduce_sum(weights, name="batch_max"))
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with name_scope(None, "total") as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
            total_update = state_ops.assign_add(total_var, reduction_ops.reduce_sum(ap, name="batch_total"),
                                                name="update")
        value = finish(metrics_collections, lambda t, m: math_ops.div_no_nan(t.read_value(), m.read_value(),
                                                                              name="mean"), total_var, max_var)
        update = math_ops.div_no_nan(total_update, max_update, name=scope.rstrip("/").split("/")[-1])
        add_to_collections(updates_collections, update)
        return value, update


def sparse_average_precision_at_k(labels: Any, predictions: Any, k: int, weights: Any = None,
                                  metrics_collections: Any = None, updates_collections: Any = None,
                                  name: str | None = None) -> tuple[Tensor, Tensor]:
    """Deprecated name of :func:`average_precision_at_k`."""
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections, updates_collections, name)
