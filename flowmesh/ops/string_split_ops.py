"""Splitting and joining strings: ``tf.strings.split`` / ``tf.string_split`` (a
``SparseTensor`` of tokens, TensorFlow 1.x's result type; ``StringSplitV2`` / ``StringSplit``)
and ``tf.strings.unsorted_segment_join``. None is differentiable."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.errors import UnimplementedError
from flowmesh.ops._builders import make_op, make_tensor


def _split_shape(inputs: Any, attrs: dict[str, Any]) -> list:
    return [(dtypes.int64, TensorShape([None, 2])), (dtypes.string, TensorShape([None])),
            (dtypes.int64, TensorShape([2]))]


register_op("StringSplitV2", _split_shape, not_differentiable=True)
register_op("StringSplit", _split_shape, not_differentiable=True)
register_op("UnsortedSegmentJoin", lambda inputs, attrs: [(dtypes.string, TensorShape(None))],
            not_differentiable=True)


def _sparse(op: Any) -> SparseTensor:
    indices, values, shape = op.outputs
    return SparseTensor(indices, values, shape)


def _check_result_type(result_type: str) -> None:
    if result_type != "SparseTensor":
        raise UnimplementedError(None, None, f"result_type={result_type!r} is not supported by flowmesh: it has no "
                                 "RaggedTensor; use result_type='SparseTensor'")


def split(source: Any = None, sep: Any = None, maxsplit: int = -1, result_type: str = "SparseTensor",
          name: str | None = None, input: Any = None) -> SparseTensor:  # noqa: A002
    """Splits each string of the 1-D ``source`` on ``sep`` (empty tokens kept), or on runs of
    whitespace when ``sep`` is None; at most ``maxsplit`` splits (-1: all)."""
    _check_result_type(result_type)
    text = convert_to_tensor(source if source is not None else input, dtype=dtypes.string)
    separator = convert_to_tensor(sep if sep is not None else "", dtype=dtypes.string)
    return _sparse(make_op("StringSplitV2", [text, separator], {"maxsplit": int(maxsplit)},
                           name=name or "StringSplitV2"))


def string_split(source: Any, sep: Any = None, skip_empty: bool = True, delimiter: Any = None,
                 result_type: str = "SparseTensor", name: str | None = None) -> SparseTensor:
    """TensorFlow 1.x's ``tf.string_split``: every character of ``sep`` (default ``" "``) is a
    delimiter; empty tokens are dropped when ``skip_empty``."""
    _check_result_type(result_type)
    sep = delimiter if sep is None else sep
    text = convert_to_tensor(source, dtype=dtypes.string)
    separator = convert_to_tensor(" " if sep is None else sep, dtype=dtypes.string)
    return _sparse(make_op("StringSplit", [text, separator], {"skip_empty": bool(skip_empty)},
                           name=name or "StringSplit"))


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "",
                          name: str | None = None) -> Tensor:
    """Joins the strings of ``inputs`` per segment id (in input order) with ``separator``."""
    ins = [convert_to_tensor(inputs, dtype=dtypes.string), convert_to_tensor(segment_ids),
           convert_to_tensor(num_segments)]
    return make_tensor("UnsortedSegmentJoin", ins, {"separator": str(separator)}, name=name or "UnsortedSegmentJoin")
