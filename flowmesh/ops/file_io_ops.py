"""Whole-file and serialization ops: ``read_file`` / ``write_file`` (local paths or fsspec
URLs), ``matching_files``, web-safe ``encode_base64`` / ``decode_base64``, and
``serialize_tensor`` / ``parse_tensor`` (a ``TensorProto``, TensorFlow's bytes)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import check_dtype, make_op, make_tensor, no_outputs, same_shape

_STRING = (dtypes.string,)
register_op("ReadFile", lambda inputs, attrs: [(dtypes.string, TensorShape([]))], not_differentiable=True,
            stateful=True)
register_op("WriteFile", no_outputs, not_differentiable=True, stateful=True)
register_op("EncodeBase64", same_shape, not_differentiable=True)
register_op("DecodeBase64", same_shape, not_differentiable=True)
register_op("SerializeTensor", lambda inputs, attrs: [(dtypes.string, TensorShape([]))], not_differentiable=True)
register_op("ParseTensor", lambda inputs, attrs: [(attrs["out_type"], TensorShape(None))], not_differentiable=True)


def _string(x: Any, op_type: str, arg: str) -> Tensor:
    t = convert_to_tensor(x, dtype=dtypes.string, name=arg)
    check_dtype(op_type, t, _STRING, arg)
    return t


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The bytes of the file ``filename`` (a scalar string)."""
    return make_tensor("ReadFile", [_string(filename, "ReadFile", "filename")], name=name or "ReadFile")


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """Writes ``contents`` to ``filename`` atomically, creating parent directories."""
    inputs = [_string(filename, "WriteFile", "filename"), _string(contents, "WriteFile", "contents")]
    return make_op("WriteFile", inputs, name=name or "WriteFile")


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted file names matching the glob ``pattern`` (scalar or vector of patterns)."""
    return make_tensor("MatchingFiles", [_string(pattern, "MatchingFiles", "pattern")], name=name or "MatchingFiles")


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Web-safe base64 (``-`` and ``_``) of each string, ``=`` padding only with ``pad``."""
    return make_tensor("EncodeBase64", [_string(input, "EncodeBase64", "input")], {"pad": bool(pad)},
                       name=name or "EncodeBase64")


def decode_base64(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Decodes web-safe base64 strings (padded or not)."""
    return make_tensor("DecodeBase64", [_string(input, "DecodeBase64", "input")], name=name or "DecodeBase64")


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """A ``TensorProto`` of ``tensor`` as a scalar string (what TensorFlow's op writes)."""
    return make_tensor("SerializeTensor", [convert_to_tensor(tensor)], name=name or "SerializeTensor")


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor of a serialized ``TensorProto`` (its dtype must be ``out_type``)."""
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    return make_tensor("ParseTensor", [_string(serialized, "ParseTensor", "serialized")], attrs,
                       name=name or "ParseTensor")
