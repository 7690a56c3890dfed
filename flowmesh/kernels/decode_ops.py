"""Kernels of ``flowmesh/ops/decode_ops.py``."""

from __future__ import annotations

import csv
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("DecodeRaw", device_types=("CPU",))
def _decode_raw(ctx: KernelContext):
    dtype = ctx.attr("out_type")
    np_type = np.dtype(dtype.as_numpy_dtype).newbyteorder("<" if ctx.attr("little_endian", True) else ">")

    def decode(strings: Any) -> Any:
        array = np.asarray(strings, dtype=object)
        flat = [bytes(s) for s in array.reshape(-1)]
        sizes = {len(s) for s in flat}
        if len(sizes) > 1:
            first = len(flat[0])
            bad = next(i for i, s in enumerate(flat) if len(s) != first)
            raise InvalidArgumentError(
                f"DecodeRaw requires input strings to all be the same size, but element {bad} has "
                f"size {len(flat[bad])} != {first}")
        size = sizes.pop() if sizes else 0
        if size % np_type.itemsize:
            raise InvalidArgumentError(
                f"Input to DecodeRaw has length {size} that is not a multiple of "
                f"{np_type.itemsize}, the size of {dtype.name}")
        out = np.frombuffer(b"".join(flat), dtype=np_type).astype(np_type.newbyteorder("="))
        return torch.from_numpy(out.reshape((*array.shape, size // np_type.itemsize)))

    return decode


def _convert(text: str, default: Any, dtype: dtypes.DType, col: int, row: int, na: str) -> Any:
    if text == "" or text == na:
        if default is None:
            raise InvalidArgumentError(f"Field {col} is required but missing in record {row}!")
        return default
    try:
        if dtype == dtypes.string:
            return text.encode()
        if dtype.is_integer:
            return int(text)
        return float(text)
    except ValueError:
        raise InvalidArgumentError(
            f"Field {col} in record {row} is not a valid {dtype.name}: {text!r}") from None


@kernel("DecodeCSV", device_types=("CPU",))
def _decode_csv(ctx: KernelContext):
    types = [t.dtype for t in ctx.op.inputs[1:]]
    delim, quote = ctx.attr("field_delim", ","), bool(ctx.attr("use_quote_delim", True))
    na, select = ctx.attr("na_value", ""), list(ctx.attr("select_cols") or [])

    def decode(records: Any, *defaults: Any) -> Any:
        array = np.asarray(records, dtype=object)
        fills = [_default(d) for d in defaults]
        columns: list[list[Any]] = [[] for _ in types]
        for row, record in enumerate(array.reshape(-1)):
            text = record.decode() if isinstance(record, bytes) else str(record)
            fields = next(csv.reader([text], delimiter=delim,
                                     quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE))
            fields = fields or [""]
            if select:
                if len(fields) <= select[-1]:
                    raise InvalidArgumentError(f"Expect {select[-1] + 1} fields but have "
                                               f"{len(fields)} in record {row}")
                fields = [fields[c] for c in select]
            if len(fields) != len(types):
                raise InvalidArgumentError(f"Expect {len(types)} fields but have {len(fields)} in "
                                           f"record {row}")
            for col, (field, fill, dtype) in enumerate(zip(fields, fills, types)):
                columns[col].append(_convert(field, fill, dtype, col, row, na))
        outs = [_column(values, dtype, array.shape) for values, dtype in zip(columns, types)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return decode


def _default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        flat = value.reshape(-1)
        return flat[0] if flat.size else None
    flat = value.reshape(-1)
    return flat[0].item() if flat.numel() else None


def _column(values: list[Any], dtype: dtypes.DType, shape: tuple[int, ...]) -> Any:
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    return torch.from_numpy(np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(shape))
