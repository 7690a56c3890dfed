"""``StringNGrams`` (``tf.strings.ngrams``): the n-grams of each row of a string tensor, joined
by ``separator``, with optional padding and ``preserve_short_sequences``; TensorFlow's op type
and padding rules, kernel in ``kernels/string_ngrams_ops.py``. Dense inputs give dense outputs
(every row has the same length), as in TensorFlow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, range_ops, reduction_ops
from flowmesh.ops._builders import make_op


def _ngrams_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.string, TensorShape([None])), (inputs[1].dtype, inputs[1].shape)]


register_op("StringNGrams", _ngrams_shape, not_differentiable=True)


def _pads(pad_values: Any) -> tuple[Any, Any]:
    if pad_values is None:
        return "", ""
    pair = pad_values if isinstance(pad_values, (list, tuple)) else (pad_values, pad_values)
    if len(pair) != 2 or not all(isinstance(p, (str, bytes)) for p in pair):
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    return pair[0], pair[1]


def ngrams(data: Any, ngram_width: Any, separator: str = " ", pad_values: Any = None,
           padding_width: int | None = None, preserve_short_sequences: bool = False,
           name: str | None = None) -> Tensor:
    """The ``ngram_width``-grams (an int or a list of widths) along the last dimension of a
    dense string tensor (``tf.strings.ngrams``); ``pad_values`` (one string or a (left, right)
    pair) pads each row by ``padding_width`` (default ``width - 1``).

    Raises:
        ValueError: a width < 1, ``padding_width`` < 1 or without ``pad_values``, or an input
            of unknown rank or rank 0.
    """
    left, right = _pads(pad_values)
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if any(int(w) < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    with name_scope(name, "StringNGrams", [data]):
        text = convert_to_tensor(data, dtype=dtypes.string, name="data")
        if text.shape.rank is None:
            raise ValueError("Rank of data must be known.")
        if text.shape.rank == 0:
            raise ValueError("Data must have rank>0")
        shape = array_ops.shape(text, out_type=dtypes.int64)
        rows = reduction_ops.reduce_prod(shape[:-1])
        splits = range_ops.range(rows + 1, dtype=dtypes.int64) * shape[-1]
        attrs = {"separator": separator, "ngram_widths": [int(w) for w in widths],
                 "left_pad": left, "right_pad": right,
                 "pad_width": 0 if pad_values is None else (-1 if padding_width is None else int(padding_width)),
                 "preserve_short_sequences": bool(preserve_short_sequences), "Tsplits": dtypes.int64}
        op = make_op("StringNGrams", [array_ops.reshape(text, [-1]), splits], attrs,
                     name="StringNGrams")
        out_shape = array_ops.concat([array_ops.shape(text)[:-1], [-1]], 0)
        return array_ops.reshape(op.outputs[0], out_shape)
