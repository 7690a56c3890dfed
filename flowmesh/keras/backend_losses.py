"""``tf.keras.backend`` losses, element-wise or per sample as tf-keras's backend computes
them (``K.categorical_crossentropy``, the focal losses, ``K.ctc_batch_cost`` and CTC
decoding); re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import backend_state
from flowmesh.ops import array_ops, cast_ops, clip_ops, manip_ops, math_ops, nn_ops, reduction_ops


# --- losses (element-wise or per-sample, as tf-keras's backend) ----------------------------
def _logits_of(output: Any, op_type: str) -> Any:
    """The logits a ``Softmax``/``Sigmoid`` output was computed from, else None."""
    op = getattr(output, "op", None)
    return op.inputs[0] if op is not None and op.type == op_type and len(op.inputs) == 1 else None


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> Any:
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Softmax")
    if logits is not None:
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=logits, axis=axis)
    output = output / reduction_ops.reduce_sum(output, axis, keepdims=True)
    eps = backend_state.epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    return -reduction_ops.reduce_sum(target * math_ops.log(output), axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1,
                                    ignore_class: int | None = None) -> Any:
    """Per-sample cross entropy of integer labels (``target`` of ``output``'s rank minus 1,
    or with a trailing 1) against ``output`` over its last axis."""
    if axis != -1 or ignore_class is not None:
        raise ValueError("flowmesh's K.sparse_categorical_crossentropy supports axis=-1 and ignore_class=None")
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Softmax")
    if logits is None:
        eps = backend_state.epsilon()
        logits = math_ops.log(clip_ops.clip_by_value(output, eps, 1.0 - eps))
    if target.shape.rank is not None and target.shape.rank == logits.shape.rank:
        target = array_ops.squeeze(target, [-1])
    labels = cast_ops.cast(target, dtypes.int64)
    if logits.shape.rank == 2:
        return nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    flat = nn_ops.sparse_softmax_cross_entropy_with_logits(
        labels=array_ops.reshape(labels, [-1]), logits=array_ops.reshape(logits, [-1, array_ops.shape(logits)[-1]]))
    return array_ops.reshape(flat, array_ops.shape(labels))


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """Element-wise binary cross entropy."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    logits = output if from_logits else _logits_of(output, "Sigmoid")
    if logits is not None:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=logits)
    eps = backend_state.epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    return -(target * math_ops.log(output + eps) + (1.0 - target) * math_ops.log(1.0 - output + eps))


def binary_focal_crossentropy(target: Any, output: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False) -> Any:
    """Element-wise focal loss: ``(1 - p_t) ** gamma`` times the binary cross entropy
    (times ``alpha``/``1 - alpha`` per class with ``apply_class_balancing``)."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        output = math_ops.sigmoid(output)
    bce = binary_crossentropy(target, output)
    p_t = target * output + (1.0 - target) * (1.0 - output)
    focal = math_ops.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (target * alpha + (1.0 - target) * (1.0 - alpha)) * focal
    return focal


def categorical_focal_crossentropy(target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, axis: int = -1) -> Any:
    """Per-sample focal loss over ``axis``: ``sum(alpha * (1 - p) ** gamma * -target * log p)``."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if from_logits:
        output = nn_ops.softmax(output, axis=axis)
    output = output / reduction_ops.reduce_sum(output, axis, keepdims=True)
    eps = backend_state.epsilon()
    output = clip_ops.clip_by_value(output, eps, 1.0 - eps)
    cce = -target * math_ops.log(output)
    return reduction_ops.reduce_sum(alpha * math_ops.pow(1.0 - output, gamma) * cce, axis)


# --- CTC ----------------------------------------------------------------------------------
def ctc_label_dense_to_sparse(labels: Any, label_lengths: Any) -> Any:
    """The first ``label_lengths[i]`` labels of each row of ``labels`` as a SparseTensor
    of dense shape ``labels.shape``."""
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.ops.nd_index_ops import gather_nd
    from flowmesh.ops.select_ops import where

    labels = convert_to_tensor(labels)
    dims = array_ops.shape(labels)
    keep = manip_ops.sequence_mask(label_lengths, maxlen=dims[1])
    indices = where(keep)
    values = gather_nd(labels, indices)
    return SparseTensor(indices, values, cast_ops.cast(dims, dtypes.int64))


def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> Any:
    """CTC loss per sample ``[batch, 1]`` of softmax outputs ``y_pred`` ``[batch, time, classes]``."""
    from flowmesh.ops.ctc_ops import ctc_loss

    label_length = cast_ops.cast(array_ops.squeeze(label_length, [-1]), dtypes.int32)
    input_length = cast_ops.cast(array_ops.squeeze(input_length, [-1]), dtypes.int32)
    sparse = ctc_label_dense_to_sparse(cast_ops.cast(y_true, dtypes.int32), label_length)
    eps = backend_state.epsilon()
    logits = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + eps)
    return array_ops.expand_dims(ctc_loss(labels=sparse, inputs=logits, sequence_length=input_length), 1)


def ctc_decode(y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100,
               top_paths: int = 1) -> tuple[list[Any], Any]:
    """Decoded label sequences (dense, padded with -1) and their log probabilities."""
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.ops import ctc_decode_ops
    from flowmesh.ops.sparse_ops import sparse_tensor_to_dense

    dims = array_ops.shape(y_pred)
    logits = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + backend_state.epsilon())
    input_length = cast_ops.cast(input_length, dtypes.int32)
    if greedy:
        decoded, log_prob = ctc_decode_ops.ctc_greedy_decoder(logits, input_length)
    else:
        decoded, log_prob = ctc_decode_ops.ctc_beam_search_decoder(logits, input_length, beam_width=beam_width,
                                                                   top_paths=top_paths)
    shape = cast_ops.cast(array_ops.stack([dims[0], dims[1]]), dtypes.int64)
    dense = [sparse_tensor_to_dense(SparseTensor(st.indices, st.values, shape), default_value=-1)
             for st in decoded]
    return dense, log_prob


__all__ = [
    "binary_crossentropy",
    "binary_focal_crossentropy",
    "categorical_crossentropy",
    "categorical_focal_crossentropy",
    "ctc_batch_cost",
    "ctc_decode",
    "ctc_label_dense_to_sparse",
    "sparse_categorical_crossentropy",
]
