"""Kernels of ``ops/proto_codec_ops.py``: messages parsed and built with protobuf's dynamic
message classes; values padded with each field's default."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.formats import filesystem as fs
from flowmesh.kernels.contract.convert import to_numpy, to_torch
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _pools(ctx: KernelContext, source: str) -> list[Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool

    if source == "local://":
        from flowmesh.protos.builder import POOL

        return [POOL, descriptor_pool.Default()]
    raw = source[len("bytes://"):].encode("latin-1") if source.startswith("bytes://") else None
    if raw is None:
        if not os.path.exists(source) and not fs.exists(source):
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): descriptor_source {source!r} "
                                       f"is neither local://, bytes://... nor a file")
        raw = fs.read_bytes(source)
    files = descriptor_pb2.FileDescriptorSet.FromString(raw)
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return [pool]


def message_class(ctx: KernelContext) -> Any:
    from google.protobuf import message_factory

    name = ctx.attr("message_type")
    for pool in _pools(ctx, ctx.attr("descriptor_source")):
        try:
            return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
        except KeyError:
            continue
    raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): message type {name!r} is not in "
                               f"descriptor_source {ctx.attr('descriptor_source')!r}")


def _fields(ctx: KernelContext, cls: Any) -> list[Any]:
    fields = []
    for name in ctx.attr("field_names"):
        field = cls.DESCRIPTOR.fields_by_name.get(name)
        if field is None:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): {cls.DESCRIPTOR.full_name} "
                                       f"has no field {name!r}")
        fields.append(field)
    return fields


def _repeated(field: Any) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 6 dropped ``label``
    return bool(flag) if flag is not None else field.label == field.LABEL_REPEATED


def _entries(message: Any, field: Any) -> list[Any]:
    value = getattr(message, field.name)
    if _repeated(field):
        items = list(value)
    else:
        present = message.HasField(field.name) if field.has_presence else value != field.default_value
        items = [value] if present else []
    if field.type in (field.TYPE_MESSAGE, field.TYPE_GROUP):
        return [m.SerializeToString() for m in items]
    return [v.encode() if isinstance(v, str) else v for v in items]


def _default(field: Any, dtype: Any) -> Any:
    if field.type in (field.TYPE_MESSAGE, field.TYPE_GROUP, field.TYPE_STRING, field.TYPE_BYTES) \
            and _repeated(field):
        return b""
    if _repeated(field):
        return 0.0 if field.type in (field.TYPE_FLOAT, field.TYPE_DOUBLE) else 0
    value = field.default_value
    return value.encode() if isinstance(value, str) else value


@kernel("DecodeProtoV2", device_types=("CPU",))
def _decode_proto(ctx: KernelContext):
    from google.protobuf import text_format

    cls = message_class(ctx)
    fields, types = _fields(ctx, cls), ctx.attr("output_types")
    text = ctx.attr("message_format") == "text"

    def parse(data: bytes) -> Any:
        try:
            return text_format.Parse(data.decode("utf-8"), cls()) if text else cls.FromString(data)
        except Exception as exc:  # noqa: BLE001 - DecodeError / ParseError
            raise InvalidArgumentError(f"DecodeProtoV2 ({ctx.op.name}): cannot parse a "
                                       f"{cls.DESCRIPTOR.full_name}: {exc}") from None

    def run(x: Any) -> tuple:
        arr = np.asarray(x, dtype=object)
        parsed = [[_entries(m, f) for f in fields] for m in (parse(bytes(b)) for b in arr.reshape(-1))]
        sizes = np.array([[len(e) for e in row] for row in parsed], np.int32).reshape(*arr.shape, len(fields))
        outs = []
        for j, (field, dtype) in enumerate(zip(fields, types)):
            width = max(1, int(sizes[..., j].max()) if sizes.size else 0)  # TensorFlow keeps >= 1
            out = np.empty((len(parsed), width), dtype=object)
            fill = np.empty((), dtype=object)
            fill[()] = _default(field, dtype)
            out[...] = fill
            for i, row in enumerate(parsed):
                out[i, :len(row[j])] = row[j]
            out = out.reshape(*arr.shape, width)
            outs.append(out if dtype == dtypes.string else
                        to_torch(out.astype(dtype.as_numpy_dtype), dtype, ctx.torch_device))
        return (torch.from_numpy(sizes), *outs)
    return run


@kernel("EncodeProtoV2", device_types=("CPU",))
def _encode_proto(ctx: KernelContext):
    cls = message_class(ctx)
    fields = _fields(ctx, cls)

    def fill(message: Any, field: Any, items: list[Any]) -> None:
        if field.type in (field.TYPE_MESSAGE, field.TYPE_GROUP):
            if _repeated(field):
                for v in items:
                    getattr(message, field.name).add().ParseFromString(bytes(v))
            elif items:
                getattr(message, field.name).ParseFromString(bytes(items[0]))
            return
        if field.type == field.TYPE_STRING:
            items = [bytes(v).decode("utf-8") for v in items]
        if _repeated(field):
            getattr(message, field.name).extend(items)
        elif items:
            setattr(message, field.name, items[0])

    def run(sizes: Any, *values: Any) -> np.ndarray:
        counts = np.asarray(to_numpy(sizes, dtypes.int32))
        arrays = [np.asarray(v, dtype=object) if isinstance(v, np.ndarray) else to_numpy(v) for v in values]
        lead = counts.shape[:-1]
        out = np.empty(lead, dtype=object)
        for index in np.ndindex(*lead):
            message = cls()
            for j, field in enumerate(fields):
                n = int(counts[index + (j,)])
                if n > arrays[j].shape[-1]:
                    raise InvalidArgumentError(f"EncodeProtoV2 ({ctx.op.name}): size {n} of field "
                                               f"{field.name!r} exceeds its values' last dimension "
                                               f"{arrays[j].shape[-1]}")
                items = [v.item() if hasattr(v, "item") and not isinstance(v, bytes) else v
                         for v in arrays[j][index][:n]]
                fill(message, field, items)
            out[index] = message.SerializeToString()
        return out
    return run
