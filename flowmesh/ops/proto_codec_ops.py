"""``DecodeProtoV2`` / ``EncodeProtoV2`` (``tf.io.decode_proto`` / ``encode_proto``): fields of
serialized protocol buffer messages to and from tensors, by field name. The message type is
looked up in flowmesh's schemas (``tensorflow.*``, ``local://``), protobuf's default pool, or a
``FileDescriptorSet`` (a file path or ``bytes://<serialized set>``); kernels in
``kernels/proto_codec_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op, make_tensor


def _decode_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    lead = inputs[0].shape.as_list() if inputs[0].shape.rank is not None else None
    n = len(attrs["field_names"])
    sizes = TensorShape(None if lead is None else lead + [n])
    return [(dtypes.int32, sizes)] + [(t, TensorShape(None if lead is None else lead + [None]))
                                      for t in attrs["output_types"]]


def _encode_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    sizes = inputs[0].shape
    return [(dtypes.string, TensorShape(None) if sizes.rank is None else sizes[:-1])]


register_op("DecodeProtoV2", _decode_shape, not_differentiable=True)
register_op("EncodeProtoV2", _encode_shape, not_differentiable=True)


def decode_proto(bytes: Any, message_type: str, field_names: Sequence[str],  # noqa: A002
                 output_types: Sequence[Any], descriptor_source: str = "local://",
                 message_format: str = "binary", sanitize: bool = False,
                 name: str | None = None) -> tuple[Tensor, list[Tensor]]:
    """The ``field_names`` of each serialized ``message_type`` in ``bytes`` (shape ``[...]``)
    (``tf.io.decode_proto``).

    Returns:
        ``(sizes, values)``: ``sizes`` int32 ``[..., len(field_names)]`` (values per field) and
        one tensor ``[..., max(1, max count)]`` per field, padded with the field's default
        (sub-messages as serialized strings, enums as int32).
    """
    if message_format not in ("binary", "text"):
        raise InvalidArgumentError(f"DecodeProtoV2: message_format must be 'binary' or 'text', "
                                   f"got {message_format!r}")
    if len(field_names) != len(output_types):
        raise InvalidArgumentError(f"DecodeProtoV2: {len(field_names)} field_names but "
                                   f"{len(output_types)} output_types")
    data = convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    attrs = {"message_type": message_type, "field_names": list(field_names),
             "output_types": [dtypes.as_dtype(t) for t in output_types],
             "descriptor_source": descriptor_source, "message_format": message_format,
             "sanitize": bool(sanitize)}
    op = make_op("DecodeProtoV2", [data], attrs, name=name or "DecodeProtoV2")
    return op.outputs[0], list(op.outputs[1:])


def encode_proto(sizes: Any, values: Sequence[Any], field_names: Sequence[str],
                 message_type: str, descriptor_source: str = "local://",
                 name: str | None = None) -> Tensor:
    """Serialized ``message_type`` messages ``[...]`` whose field ``j`` holds the first
    ``sizes[..., j]`` entries of ``values[j]`` ``[..., max count]`` (``tf.io.encode_proto``)."""
    if len(field_names) != len(values):
        raise InvalidArgumentError(f"EncodeProtoV2: {len(field_names)} field_names but "
                                   f"{len(values)} values")
    size_t = convert_to_tensor(sizes, dtype=dtypes.int32, name="sizes")
    tensors = [convert_to_tensor(v) for v in values]
    attrs = {"message_type": message_type, "field_names": list(field_names),
             "descriptor_source": descriptor_source, "Tinput_types": [t.dtype for t in tensors]}
    return make_tensor("EncodeProtoV2", [size_t, *tensors], attrs, name=name or "EncodeProtoV2")
