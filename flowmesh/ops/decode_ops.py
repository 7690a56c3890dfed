"""Decoding strings into numbers: ``decode_raw`` (bytes as a flat array of a numeric type)
and ``decode_csv`` (CSV records into one tensor per column)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_op, make_tensor

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _decode_raw_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["out_type"], inputs[0].shape.concatenate(TensorShape([None])))]


def _decode_csv_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(t.dtype, inputs[0].shape) for t in inputs[1:]]


register_op("DecodeRaw", _decode_raw_shape, not_differentiable=True)
register_op("DecodeCSV", _decode_csv_shape, not_differentiable=True)


def decode_raw(input_bytes: Any = None, out_type: Any = None, little_endian: bool = True,
               name: str | None = None, bytes: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """Each string's bytes as a vector of ``out_type`` (``tf.decode_raw``); the strings must
    all have the same length."""
    value = input_bytes if input_bytes is not None else bytes
    tensor = convert_to_tensor(value, dtype=dtypes.string, name="bytes")
    dtype = dtypes.as_dtype(out_type)
    if dtype in (dtypes.string, dtypes.resource, dtypes.variant, dtypes.bool):
        raise TypeError(f"decode_raw: out_type must be a numeric dtype, got {dtype.name}")
    return make_tensor("DecodeRaw", [tensor], {"out_type": dtype, "little_endian": little_endian},
                       name=name or "DecodeRaw")


def decode_csv(records: Any, record_defaults: Sequence[Any], field_delim: str = ",",
               use_quote_delim: bool = True, name: str | None = None, na_value: str = "",
               select_cols: Sequence[int] | None = None) -> list[Tensor]:
    """One tensor per column of CSV ``records`` (``tf.decode_csv``).

    Args:
        record_defaults: per column, a one-element list/tensor giving the default value
            and dtype, or an empty one of a dtype (the column is then required).
        select_cols: the (sorted) column indices to return; all when ``None``.

    Raises:
        ValueError: bad defaults or ``select_cols``.
    """
    tensor = convert_to_tensor(records, dtype=dtypes.string, name="records")
    defaults = [_csv_default(d, i) for i, d in enumerate(record_defaults)]
    if select_cols is not None:
        cols = [int(c) for c in select_cols]
        if cols != sorted(set(cols)) or (cols and cols[0] < 0):
            raise ValueError("select_cols must be sorted, unique and non-negative")
        if len(cols) != len(defaults):
            raise ValueError(f"Length of select_cols ({len(cols)}) and record_defaults "
                             f"({len(defaults)}) should match")
    attrs = {"field_delim": field_delim, "use_quote_delim": use_quote_delim,
             "na_value": na_value, "select_cols": list(select_cols or [])}
    return list(make_op("DecodeCSV", [tensor, *defaults], attrs, name=name or "DecodeCSV").outputs)


def _csv_default(value: Any, index: int) -> Tensor:
    if isinstance(value, dtypes.DType):
        value = convert_to_tensor([], dtype=value)
    tensor = convert_to_tensor(value)
    if tensor.dtype not in _CSV_TYPES:
        raise ValueError(f"record_defaults[{index}] has dtype {tensor.dtype.name}; decode_csv "
                         "supports float32, float64, int32, int64 and string")
    if tensor.shape.rank not in (None, 0, 1):
        raise ValueError(f"record_defaults[{index}] must be a scalar or have at most one element")
    return tensor
