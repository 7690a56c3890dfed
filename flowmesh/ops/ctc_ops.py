"""Connectionist temporal classification: ``tf.nn.ctc_loss`` (TensorFlow 1.x: sparse labels,
blank = the last class) and ``tf.nn.ctc_loss_v2`` (dense or sparse labels, ``blank_index``).

``CTCLoss`` (TensorFlow's op type) outputs the per-example negative log-likelihood and its
gradient with respect to the logits, computed together by the kernel (torch's CTC on the
log-softmax, in float64); the registered gradient scales that output by the incoming
gradient, as TensorFlow's ``_CTCLossGrad`` does (no second order, as in TensorFlow).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.ops import array_ops, manip_ops
from flowmesh.ops._builders import make_op
from flowmesh.ops.nd_index_ops import gather_nd
from flowmesh.ops.select_ops import where


def _ctc_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    logits = inputs[0]
    if logits.shape.rank not in (None, 3):
        raise InvalidArgumentError(f"CTCLoss: inputs must be [max_time, batch_size, num_classes], got {logits.shape}")
    batch = logits.shape.as_list()[1] if logits.shape.rank == 3 else None
    return [(logits.dtype, TensorShape([batch])), (logits.dtype, logits.shape)]


def _ctc_grad(op: Any, grad_loss: Tensor, _grad_gradient: Any) -> list:
    return [array_ops.reshape(grad_loss, [1, -1, 1]) * array_ops.stop_gradient(op.outputs[1]), None, None, None]


register_op("CTCLoss", _ctc_shape, grad=_ctc_grad)


def _ctc(logits: Tensor, indices: Any, values: Any, sequence_length: Any, collapse: bool, merge: bool,
         ignore_longer: bool, blank_index: int) -> Tensor:
    if not merge:
        raise UnimplementedError(None, None, "ctc_loss(ctc_merge_repeated=False) is not supported by flowmesh: "
                                 "torch's CTC merges repeated labels.")
    attrs = {"preprocess_collapse_repeated": bool(collapse), "ctc_merge_repeated": True,
             "ignore_longer_outputs_than_inputs": bool(ignore_longer)}
    if blank_index != -1:
        attrs["_blank_index"] = int(blank_index)
    ins = [logits, convert_to_tensor(indices, dtype=dtypes.int64), convert_to_tensor(values, dtype=dtypes.int32),
           convert_to_tensor(sequence_length, dtype=dtypes.int32)]
    return make_op("CTCLoss", ins, attrs, name="CTCLoss").outputs[0]


def ctc_loss(labels: Any, inputs: Any = None, sequence_length: Any = None, preprocess_collapse_repeated: bool = False,
             ctc_merge_repeated: bool = True, ignore_longer_outputs_than_inputs: bool = False,
             time_major: bool = True, logits: Any = None) -> Tensor:
    """CTC loss per example ``[batch_size]`` (``tf.compat.v1.nn.ctc_loss``).

    Args:
        labels: a ``SparseTensor`` of int32 label ids (``[batch, max_label_len]``); the blank
            is ``num_classes - 1``.
        inputs: logits ``[max_time, batch, num_classes]`` (``[batch, max_time, ...]`` when
            not ``time_major``).
        sequence_length: int32 ``[batch]`` lengths of the inputs.

    Raises:
        UnimplementedError: ``ctc_merge_repeated=False``.
        InvalidArgumentError: at run time, a label longer than its input (unless
            ``ignore_longer_outputs_than_inputs``) or a label id out of range.
    """
    x = convert_to_tensor(inputs if inputs is not None else logits)
    with name_scope(None, "CTCLoss", [x, sequence_length]):
        if not time_major:
            x = array_ops.transpose(x, [1, 0, 2])
        return _ctc(x, labels.indices, labels.values, sequence_length, preprocess_collapse_repeated,
                    ctc_merge_repeated, ignore_longer_outputs_than_inputs, -1)


def ctc_loss_v2(labels: Any, logits: Any, label_length: Any, logit_length: Any, logits_time_major: bool = True,
                unique: Any = None, blank_index: int | None = None, name: str | None = None) -> Tensor:
    """CTC loss per example with dense (or sparse) labels (``tf.nn.ctc_loss_v2``);
    ``blank_index`` defaults to 0 (negative values count from the end).

    Raises:
        UnimplementedError: ``unique`` given (TensorFlow's TPU-oriented precomputation).
    """
    if unique is not None:
        raise UnimplementedError(None, None, "ctc_loss_v2(unique=...) is not supported by flowmesh.")
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        x = convert_to_tensor(logits)
        if not logits_time_major:
            x = array_ops.transpose(x, [1, 0, 2])
        blank = 0 if blank_index is None else int(blank_index)  # negative: counted from the end, by the kernel
        if hasattr(labels, "indices"):
            indices, values = labels.indices, labels.values
        else:
            dense = convert_to_tensor(labels)
            mask = manip_ops.sequence_mask(label_length, maxlen=array_ops.shape(dense)[1])
            indices = where(mask)
            values = gather_nd(dense, indices)
        return _ctc(x, indices, values, logit_length, False, True, False, blank)
