"""``tf.nn.embedding_lookup_sparse`` and ``safe_embedding_lookup_sparse``: embeddings of the ids
of a ``SparseTensor`` combined per row (``sum``, ``mean``, ``sqrtn``, optionally weighted),
composed from ``embedding_lookup`` and segment ops as TensorFlow's Python does, so gradients
to the parameters are ``IndexedSlices`` and partitioned parameters work."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops import array_ops, cast_ops, gather_ops, manip_ops, math_ops, reduction_ops, select_ops
from flowmesh.ops import sparse_manip_ops as sparse
from flowmesh.ops.embedding_ops import embedding_lookup
from flowmesh.ops.segment_ops import segment_sum
from flowmesh.ops.sparse_math_ops import segment_mean, segment_sqrt_n
from flowmesh.ops.sparse_math_ops import segment_sum as sparse_segment_sum

_COMBINERS = ("mean", "sqrtn", "sum")


def _as_list(params: Any) -> list[Any]:
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        return list(params)
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _weighted(embeddings: Tensor, segment_ids: Tensor, weights: Tensor, combiner: str,
              name: str) -> Tensor:
    original = embeddings.dtype
    if original in (dtypes.float16, dtypes.bfloat16):
        embeddings = cast_ops.cast(embeddings, dtypes.float32)
    if weights.dtype != embeddings.dtype:
        weights = cast_ops.cast(weights, embeddings.dtype)
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0), dtype=dtypes.int32)
    weights = array_ops.reshape(weights, array_ops.concat([array_ops.shape(weights), ones], 0))
    embeddings = embeddings * weights
    if combiner == "sum":
        out = segment_sum(embeddings, segment_ids, name=name)
    elif combiner == "mean":
        out = math_ops.div_no_nan(segment_sum(embeddings, segment_ids), segment_sum(weights, segment_ids),
                                  name=name)
    else:
        norm = math_ops.sqrt(segment_sum(math_ops.pow(weights, 2), segment_ids))
        out = math_ops.div_no_nan(segment_sum(embeddings, segment_ids), norm, name=name)
    return cast_ops.cast(out, original) if out.dtype != original else out


def embedding_lookup_sparse(params: Any, sp_ids: SparseTensor, sp_weights: SparseTensor | None,
                            partition_strategy: str = "mod", name: str | None = None,
                            combiner: str | None = None, max_norm: float | None = None,
                            allow_fast_lookup: bool = False) -> Tensor:
    """Per row ``r`` of ``sp_ids`` (rows = first index), the combination of
    ``params[id] * weight`` over the row's ids (``tf.nn.embedding_lookup_sparse``).

    Raises:
        ValueError: unknown ``combiner``. TypeError: ``sp_ids``/``sp_weights`` not SparseTensors.
    """
    combiner = combiner or "mean"
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"sp_weights must be either None or SparseTensor, got {type(sp_weights)}")
    params = _as_list(params)
    with name_scope(name, "embedding_lookup_sparse", params + [sp_ids]) as scope:
        segment_ids = cast_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = manip_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if sp_weights is not None:
            return _weighted(gather_ops.gather(embeddings, idx), segment_ids, sp_weights.values,
                             combiner, scope)
        combine = {"sum": sparse_segment_sum, "mean": segment_mean, "sqrtn": segment_sqrt_n}[combiner]
        return combine(embeddings, idx, segment_ids, name=scope)


def _prune(sparse_ids: SparseTensor, sparse_weights: SparseTensor | None,
           positive_weights: bool) -> tuple[SparseTensor, SparseTensor | None]:
    keep = math_ops.greater_equal(sparse_ids.values, 0)
    sparse_ids = sparse.retain(sparse_ids, keep)
    if sparse_weights is not None:
        sparse_weights = sparse.retain(sparse_weights, keep)
        if positive_weights:
            valid = math_ops.greater(sparse_weights.values, 0)
            sparse_ids, sparse_weights = sparse.retain(sparse_ids, valid), sparse.retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: SparseTensor,
                                 sparse_weights: SparseTensor | None = None, combiner: str = "mean",
                                 default_id: int | None = None, name: str | None = None,
                                 partition_strategy: str = "div", max_norm: float | None = None,
                                 allow_fast_lookup: bool = False) -> Tensor:
    """:func:`embedding_lookup_sparse` that drops negative ids (and non-positive weights unless
    ``combiner="sum"``), gives empty rows the ``default_id`` embedding (zeros without one) and
    keeps the leading dimensions of a higher-rank ``sparse_ids``
    (``tf.nn.safe_embedding_lookup_sparse``).

    Raises:
        ValueError: no ``embedding_weights``.
    """
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    weights_list = _as_list(embedding_weights)
    if not weights_list:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    with name_scope(name, "embedding_lookup", weights_list + [sparse_ids]) as scope:
        shape = sparse_ids.dense_shape
        rank = array_ops.size(shape)
        leading = manip_ops.slice(shape, [0], array_ops.expand_dims(rank - 1, 0))
        sparse_ids = sparse.reshape(sparse_ids, array_ops.stack(
            [reduction_ops.reduce_prod(leading), gather_ops.gather(shape, rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune(sparse_ids, sparse_weights, combiner != "sum")
        sparse_ids, is_row_empty = sparse.fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse.fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(weights_list, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy, max_norm=max_norm)
        if default_id is None:
            empty = manip_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                                   array_ops.stack([1, array_ops.shape(result)[1]]))
            result = select_ops.where(empty, array_ops.zeros_like(result), result)
        out_shape = array_ops.concat([cast_ops.cast(leading, dtypes.int32),
                                      array_ops.shape(result)[1:]], 0)
        return array_ops.reshape(result, out_shape, name=scope)


