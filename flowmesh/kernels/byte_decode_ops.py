"""Kernels of ``ops/byte_decode_ops.py``: decompression and JSON ``Example`` decoding, one
Python call per string (host)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.errors import DataLossError, InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.file_io_ops import _bytes


def _map(fn: Callable[[bytes], bytes]) -> Callable[[Any], np.ndarray]:
    def run(x: Any) -> np.ndarray:
        arr = np.asarray(x, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for i, item in np.ndenumerate(arr):
            out[i] = fn(_bytes(item))
        return out
    return run


@kernel("DecodeCompressed", device_types=("CPU",))
def _decode_compressed(ctx: KernelContext):
    kind = ctx.attr("compression_type", "")
    inflate = {"": lambda b: b, "ZLIB": zlib.decompress, "GZIP": gzip.decompress}[kind]

    def one(data: bytes) -> bytes:
        try:
            return inflate(data)
        except (zlib.error, OSError, EOFError) as exc:
            raise DataLossError(None, None, f"DecodeCompressed ({ctx.op.name}): a {len(data)}-byte "
                                f"string is not valid {kind} data: {exc}") from None
    return _map(one)


@kernel("DecodeJSONExample", device_types=("CPU",))
def _decode_json_example(ctx: KernelContext):
    from google.protobuf import json_format

    from flowmesh.protos.example import Example

    def one(text: bytes) -> bytes:
        try:
            return json_format.Parse(text.decode("utf-8"), Example()).SerializeToString()
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            raise InvalidArgumentError(f"DecodeJSONExample ({ctx.op.name}): not a JSON "
                                       f"tf.train.Example: {exc}") from None
    return _map(one)
