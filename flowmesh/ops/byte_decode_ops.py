"""Whole-string decoders: ``DecodeCompressed`` (ZLIB/GZIP, ``tf.io.decode_compressed``) and
``DecodeJSONExample`` (an ``Example`` in protobuf's JSON mapping to its binary form,
``tf.io.decode_json_example``); elementwise over string tensors, kernels in
``kernels/byte_decode_ops.py``."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_tensor, same_shape

register_op("DecodeCompressed", same_shape, not_differentiable=True)
register_op("DecodeJSONExample", same_shape, not_differentiable=True)

_COMPRESSION = ("", "ZLIB", "GZIP")


def decode_compressed(bytes: Any, compression_type: str = "",  # noqa: A002 - TF's name
                      name: str | None = None) -> Tensor:
    """Each string of ``bytes`` decompressed (``compression_type`` ``"ZLIB"``, ``"GZIP"``, or
    ``""`` for none), same shape (``tf.io.decode_compressed``)."""
    if compression_type not in _COMPRESSION:
        raise InvalidArgumentError(f"DecodeCompressed: compression_type must be one of "
                                   f"{list(_COMPRESSION)}, got {compression_type!r}")
    tensor = convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    return make_tensor("DecodeCompressed", [tensor], {"compression_type": compression_type},
                       name=name or "DecodeCompressed")


def decode_json_example(json_examples: Any, name: str | None = None) -> Tensor:
    """Each JSON-encoded ``tf.train.Example`` (protobuf's JSON mapping) as the serialized
    binary ``Example``, same shape (``tf.io.decode_json_example``)."""
    tensor = convert_to_tensor(json_examples, dtype=dtypes.string, name="json_examples")
    return make_tensor("DecodeJSONExample", [tensor], {}, name=name or "DecodeJSONExample")
