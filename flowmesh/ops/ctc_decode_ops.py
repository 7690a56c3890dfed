"""CTC decoding and label helpers of ``tf.nn``: ``CTCGreedyDecoder`` and ``CTCBeamSearchDecoder``
(TensorFlow's op types; kernels in ``kernels/ctc_decode_ops.py``), and ``collapse_repeated`` /
``ctc_unique_labels`` composed from graph ops as TensorFlow's Python does. None is
differentiable (as in TensorFlow)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import make_op
from flowmesh.ops.functional_ops import map_fn
from flowmesh.ops.gather_ops import boolean_mask
from flowmesh.ops.manip_ops import pad, sequence_mask, unique
from flowmesh.ops.nd_index_ops import scatter_nd
from flowmesh.ops.range_ops import range as range_


def _check_inputs(op_type: str, inputs: Sequence[Tensor]) -> tuple[Any, Any]:
    logits, lengths = inputs
    if logits.shape.rank not in (None, 3):
        raise InvalidArgumentError(f"{op_type}: inputs must be [max_time, batch_size, num_classes], "
                                   f"got {logits.shape}")
    if lengths.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"{op_type}: sequence_length must be a vector [batch_size], got "
                                   f"{lengths.shape}")
    batch = logits.shape.as_list()[1] if logits.shape.rank else None
    return batch, logits.dtype


def _decoded_specs(paths: int) -> list:
    return ([(dtypes.int64, TensorShape([None, 2]))] * paths + [(dtypes.int64, TensorShape([None]))] * paths
            + [(dtypes.int64, TensorShape([2]))] * paths)


def _greedy_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    batch, dtype = _check_inputs("CTCGreedyDecoder", inputs)
    return _decoded_specs(1) + [(dtype, TensorShape([batch, 1]))]


def _beam_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    batch, dtype = _check_inputs("CTCBeamSearchDecoder", inputs)
    return _decoded_specs(attrs["top_paths"]) + [(dtype, TensorShape([batch, attrs["top_paths"]]))]


register_op("CTCGreedyDecoder", _greedy_shape, not_differentiable=True)
register_op("CTCBeamSearchDecoder", _beam_shape, not_differentiable=True)


def _decoder_inputs(inputs: Any, sequence_length: Any) -> list[Tensor]:
    logits = convert_to_tensor(inputs, name="inputs")
    if logits.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"CTC decoders: inputs must be float32 or float64, got {logits.dtype.name}")
    return [logits, convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")]


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                       blank_index: int | None = None) -> tuple[list[SparseTensor], Tensor]:
    """Best-path decoding of ``[max_time, batch, num_classes]`` logits
    (``tf.nn.ctc_greedy_decoder``): the arg-max class of each step, repeats merged
    (``merge_repeated``), blanks (``blank_index``, default the last class) removed.

    Returns:
        ``([decoded SparseTensor [batch, max_decoded_length]], neg_sum_logits [batch, 1])``
        where ``neg_sum_logits`` is minus the sum of each step's largest logit.
    """
    op = make_op("CTCGreedyDecoder", _decoder_inputs(inputs, sequence_length),
                 {"merge_repeated": bool(merge_repeated),
                  "blank_index": -1 if blank_index is None else int(blank_index)},
                 name="CTCGreedyDecoder")
    return [SparseTensor(*op.outputs[:3])], op.outputs[3]


def ctc_beam_search_decoder(inputs: Any, sequence_length: Any, beam_width: int = 100,
                            top_paths: int = 1, merge_repeated: bool = True
                            ) -> tuple[list[SparseTensor], Tensor]:
    """Prefix beam search over ``[max_time, batch, num_classes]`` logits, the blank being the
    last class (``tf.nn.ctc_beam_search_decoder``; TensorFlow's algorithm, so the same paths
    and log-probabilities).

    Returns:
        ``(decoded, log_probabilities)``: ``top_paths`` SparseTensors ``[batch, max_length_j]``
        and their ``[batch, top_paths]`` log-probabilities.

    Raises:
        InvalidArgumentError: ``top_paths`` < 1 or larger than ``beam_width``.
    """
    if not 1 <= int(top_paths) <= int(beam_width):
        raise InvalidArgumentError(f"CTCBeamSearchDecoder: need 1 <= top_paths <= beam_width, got "
                                   f"top_paths={top_paths}, beam_width={beam_width}")
    n = int(top_paths)
    op = make_op("CTCBeamSearchDecoder", _decoder_inputs(inputs, sequence_length),
                 {"beam_width": int(beam_width), "top_paths": n,
                  "merge_repeated": bool(merge_repeated)}, name="CTCBeamSearchDecoder")
    outs = op.outputs
    return [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)], outs[3 * n]


def ctc_beam_search_decoder_v2(inputs: Any, sequence_length: Any, beam_width: int = 100,
                               top_paths: int = 1) -> tuple[list[SparseTensor], Tensor]:
    """:func:`ctc_beam_search_decoder` without merging repeated labels of a path
    (``tf.nn.ctc_beam_search_decoder_v2``)."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths, False)


def collapse_repeated(labels: Any, seq_length: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Merges runs of a repeated label in each row of ``labels`` ``[batch, max_len]`` within
    its ``seq_length`` (``tf.nn.collapse_repeated``). Returns ``(collapsed labels
    [batch, new_max_len] zero-padded, new lengths)``."""

    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        first = array_ops.ones_like(labels[:, :1], dtype=dtypes.bool)
        label_mask = array_ops.concat([first, math_ops.not_equal(labels[:, 1:], labels[:, :-1])], 1)
        label_mask = math_ops.logical_and(label_mask, sequence_mask(seq_length, array_ops.shape(labels)[1]))
        new_len = reduction_ops.reduce_sum(cast_ops.cast(label_mask, dtypes.int32), axis=1)
        idx_mask = sequence_mask(new_len, reduction_ops.reduce_max(new_len))
        flat_idx_mask = array_ops.reshape(idx_mask, [-1])
        idx = range_(array_ops.shape(flat_idx_mask)[0])
        flat = scatter_nd(array_ops.expand_dims(boolean_mask(idx, flat_idx_mask), 1),
                          boolean_mask(array_ops.reshape(labels, [-1]), array_ops.reshape(label_mask, [-1])),
                          array_ops.shape(flat_idx_mask))
        shape = array_ops.stack([array_ops.shape(labels)[0], reduction_ops.reduce_max(new_len)])
        return array_ops.reshape(flat, shape), cast_ops.cast(new_len, seq_length.dtype)


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Per row of ``labels`` ``[batch, max_len]``: its unique labels in order of first
    appearance, zero-padded to ``max_len`` (int64), and each label's index into them
    (``tf.nn.ctc_unique_labels``)."""

    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def one_row(row: Tensor) -> list[Tensor]:
            values, index = unique(row)
            padded = pad(values, [[0, array_ops.shape(index)[0] - array_ops.shape(values)[0]]])
            return [cast_ops.cast(padded, dtypes.int64), index]

        return tuple(map_fn(one_row, labels, dtype=[dtypes.int64, dtypes.int32]))
