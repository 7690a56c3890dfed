"""Sampled losses: ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss`` (TensorFlow's
``_compute_sampled_logits`` as graph ops, so gradients reach ``inputs``, ``weights``
(as ``IndexedSlices`` through ``embedding_lookup``) and ``biases``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops
from flowmesh.ops.candidate_sampling_ops import compute_accidental_hits, log_uniform_candidate_sampler
from flowmesh.ops.embedding_ops import embedding_lookup
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.nn_ops import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from flowmesh.ops.sparse_ops import sparse_to_dense


def _split_rows(all_rows: Tensor, count: Tensor) -> tuple[Tensor, Tensor]:
    """(first ``count`` rows, the rest) of a rank-1 or rank-2 tensor."""
    if all_rows.shape.rank == 1:
        return (manip_ops.slice(all_rows, [0], array_ops.expand_dims(count, 0)),
                manip_ops.slice(all_rows, array_ops.expand_dims(count, 0), [-1]))
    return (manip_ops.slice(all_rows, [0, 0], array_ops.stack([count, -1])),
            manip_ops.slice(all_rows, array_ops.stack([count, 0]), [-1, -1]))


def _remove_hits(sampled_logits: Tensor, labels: Tensor, sampled: Tensor, num_true: int,
                 num_sampled: int) -> Tensor:
    indices, ids, weights = compute_accidental_hits(labels, sampled, num_true=num_true)
    sparse_indices = array_ops.concat([array_ops.reshape(indices, [-1, 1]),
                                       array_ops.reshape(cast_ops.cast(ids, dtypes.int32), [-1, 1])], 1)
    shape = array_ops.concat([array_ops.shape(labels)[:1], [num_sampled]], 0)
    dense = sparse_to_dense(sparse_indices, shape, cast_ops.cast(weights, sampled_logits.dtype),
                            default_value=0.0, validate_indices=False)
    return sampled_logits + dense


def compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                           num_classes: int, num_true: int = 1, sampled_values: Any = None,
                           subtract_log_q: bool = True, remove_accidental_hits: bool = False,
                           partition_strategy: str = "mod", seed: Any = None) -> tuple[Tensor, Tensor]:
    """Logits and soft labels over ``[true classes | sampled classes]`` (TensorFlow's
    ``_compute_sampled_logits``)."""
    labels = convert_to_tensor(labels)
    if labels.dtype != dtypes.int64:
        labels = cast_ops.cast(labels, dtypes.int64)
    inputs = convert_to_tensor(inputs)
    labels_flat = array_ops.reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed)
    sampled, true_expected, sampled_expected = (array_ops.stop_gradient(convert_to_tensor(s))
                                                for s in sampled_values)
    sampled = cast_ops.cast(sampled, dtypes.int64)
    all_ids = array_ops.concat([labels_flat, sampled], 0)
    count = array_ops.shape(labels_flat)[0]
    true_w, sampled_w = _split_rows(embedding_lookup(weights, all_ids, partition_strategy=partition_strategy), count)
    true_b, sampled_b = _split_rows(embedding_lookup(biases, all_ids, partition_strategy=partition_strategy), count)
    sampled_logits = matmul(inputs, sampled_w, transpose_b=True) + sampled_b
    dim = array_ops.shape(true_w)[1:2]
    row_dots = array_ops.expand_dims(inputs, 1) * array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
    true_logits = reduction_ops.reduce_sum(row_dots, axis=2) + array_ops.reshape(true_b, [-1, num_true])
    if remove_accidental_hits:
        sampled_logits = _remove_hits(sampled_logits, labels, sampled, num_true, num_sampled)
    if subtract_log_q:
        true_logits -= math_ops.log(cast_ops.cast(true_expected, true_logits.dtype))
        sampled_logits -= math_ops.log(cast_ops.cast(sampled_expected, sampled_logits.dtype))
    logits = array_ops.concat([true_logits, sampled_logits], 1)
    soft_labels = array_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                    array_ops.zeros_like(sampled_logits)], 1)
    return logits, soft_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation loss per example ``[batch_size]`` (``tf.nn.nce_loss``).

    Args:
        weights: ``[num_classes, dim]`` (a tensor, variable, or list of partitions).
        biases: ``[num_classes]``.
        labels: ``[batch_size, num_true]`` target classes (int).
        inputs: ``[batch_size, dim]`` activations.
        num_sampled: negative classes sampled per batch.
        num_classes: the number of classes.
        sampled_values: a ``(sampled, true_expected_count, sampled_expected_count)`` tuple
            from a candidate sampler (default: log-uniform, unique).
    """
    with name_scope(name, "nce_loss", [weights, biases, labels, inputs]):
        logits, soft_labels = compute_sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
            True, remove_accidental_hits, partition_strategy)
        losses = sigmoid_cross_entropy_with_logits(labels=soft_labels, logits=logits, name="sampled_losses")
        return reduction_ops.reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                         num_classes: int, num_true: int = 1, sampled_values: Any = None,
                         remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss", seed: Any = None) -> Tensor:
    """Sampled softmax cross entropy per example ``[batch_size]``
    (``tf.nn.sampled_softmax_loss``; arguments as :func:`nce_loss`)."""
    with name_scope(name, "sampled_softmax_loss", [weights, biases, labels, inputs]):
        logits, soft_labels = compute_sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
            True, remove_accidental_hits, partition_strategy, seed)
        return softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(soft_labels), logits=logits)
