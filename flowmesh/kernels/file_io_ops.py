"""Kernels of ``flowmesh/ops/file_io_ops.py`` (host; files through ``formats.filesystem``)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.errors import DataLossError, InvalidArgumentError
from flowmesh.formats import filesystem as fs
from flowmesh.kernels.contract.convert import to_numpy, to_torch
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.io_ops import scalar_string


def _bytes(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return value if isinstance(value, bytes) else str(value).encode()


@kernel("ReadFile", device_types=("CPU",))
def _read_file(ctx: KernelContext):
    return lambda filename: np.array(fs.read_bytes(scalar_string(filename)), dtype=object)


@kernel("WriteFile", device_types=("CPU",))
def _write_file(ctx: KernelContext):
    def run(filename: Any, contents: Any) -> None:
        path = scalar_string(filename)
        parent = fs.dirname(path)
        if parent:
            fs.makedirs(parent)
        fs.write_bytes_atomic(path, _bytes(contents))

    return run


def _elementwise(fn: Any):
    def run(x: Any) -> np.ndarray:
        arr = np.asarray(x, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for i, item in np.ndenumerate(arr):
            out[i] = fn(_bytes(item))
        return out

    return run


@kernel("EncodeBase64", device_types=("CPU",))
def _encode_base64(ctx: KernelContext):
    pad = bool(ctx.attr("pad", False))
    return _elementwise(lambda b: base64.urlsafe_b64encode(b) if pad else base64.urlsafe_b64encode(b).rstrip(b"="))


def _decode(b: bytes) -> bytes:
    try:
        return base64.urlsafe_b64decode(b + b"=" * (-len(b) % 4))
    except ValueError as exc:
        raise InvalidArgumentError(f"Invalid character found in base64: {exc}") from None


@kernel("DecodeBase64", device_types=("CPU",))
def _decode_base64(ctx: KernelContext):
    return _elementwise(_decode)


@kernel("SerializeTensor", device_types=("CPU",))
def _serialize(ctx: KernelContext):
    from flowmesh.core.graph_def import make_tensor_proto

    dtype = ctx.op.inputs[0].dtype

    def run(x: Any) -> np.ndarray:
        array = np.asarray(to_numpy(x, dtype), dtype=object if dtype == dtypes.string else None)
        return np.array(make_tensor_proto(array, dtype=dtype).SerializeToString(), dtype=object)

    return run


@kernel("ParseTensor", device_types=("CPU",))
def _parse(ctx: KernelContext):
    from google.protobuf.message import DecodeError

    from flowmesh.core.graph_def import make_ndarray
    from flowmesh.protos.tensor import TensorProto

    out_type = ctx.attr("out_type")

    def run(serialized: Any) -> Any:
        try:
            proto = TensorProto.FromString(_bytes(serialized))
        except DecodeError:
            raise DataLossError(None, None, "Could not parse `serialized` as TensorProto") from None
        if proto.dtype != out_type.as_datatype_enum:
            raise InvalidArgumentError(f"Type mismatch between parsed tensor ({dtypes.as_dtype(proto.dtype).name}) "
                                       f"and dtype ({out_type.name})")
        return to_torch(make_ndarray(proto), out_type, ctx.torch_device)

    return run
