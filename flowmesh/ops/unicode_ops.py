"""``tf.strings`` Unicode ops: ``UnicodeDecodeWithOffsets``, ``UnicodeEncode``,
``UnicodeTranscode`` (TensorFlow's op types; kernels in ``kernels/unicode_ops.py``) and the
wrappers ``unicode_decode(_with_offsets)``, ``unicode_split(_with_offsets)``, ``bytes_split``,
``unicode_encode``, ``unicode_transcode``.

RaggedTensor is not implemented (``flowmesh.unsupported.RAGGED``): the functions whose
TensorFlow result is ragged (decode/split of a rank >= 1 input) take a scalar string, for
which TensorFlow's result is a dense vector too, and raise ``UnimplementedError`` naming
that reason and the workaround otherwise (``unicode_encode`` of dense code points and
``unicode_transcode`` work at any rank)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.ops import array_ops, cast_ops, range_ops, reduction_ops
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.string_split_ops import string_split
from flowmesh.unsupported import RAGGED

_ERRORS = ("strict", "replace", "ignore")


def _decode_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    n = inputs[0].shape.num_elements() if inputs[0].shape.is_fully_defined() else None
    return [(dtypes.int64, TensorShape([None if n is None else n + 1])),
            (dtypes.int32, TensorShape([None])), (dtypes.int64, TensorShape([None]))]


def _encode_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rows = inputs[1].shape.as_list()[0] if inputs[1].shape.rank == 1 else None
    return [(dtypes.string, TensorShape([None if rows is None else rows - 1]))]


register_op("UnicodeDecodeWithOffsets", _decode_shape, not_differentiable=True)
register_op("UnicodeEncode", _encode_shape, not_differentiable=True)
register_op("UnicodeTranscode", lambda i, a: [(dtypes.string, i[0].shape)], not_differentiable=True)


def _check_errors(op_type: str, errors: str, replacement_char: int) -> dict[str, Any]:
    if errors not in _ERRORS:
        raise InvalidArgumentError(f"{op_type}: errors must be one of {list(_ERRORS)}, got {errors!r}")
    if not 0 <= int(replacement_char) <= 0x10FFFF:
        raise InvalidArgumentError(f"{op_type}: replacement_char must be a code point, got "
                                   f"{replacement_char}")
    return {"errors": errors, "replacement_char": int(replacement_char)}


def _scalar_input(what: str, input: Any) -> Tensor:  # noqa: A002
    text = convert_to_tensor(input, dtype=dtypes.string, name="input")
    if text.shape.rank != 0:
        raise UnimplementedError(None, None, (
            f"tf.strings.{what} of a rank-{text.shape.rank} input returns a RaggedTensor in "
            f"TensorFlow: {RAGGED}. Call it on scalar strings (e.g. inside tf.data's map or "
            f"tf.map_fn), or use tf.strings.unicode_transcode / tf.strings.split for whole tensors"))
    return text


def _decode(what: str, input: Any, input_encoding: str, errors: str,  # noqa: A002
            replacement_char: int, replace_control_characters: bool) -> tuple[Tensor, Tensor]:
    text = _scalar_input(what, input)
    attrs = {"input_encoding": input_encoding, "replace_control_characters":
             bool(replace_control_characters), "Tsplits": dtypes.int64,
             **_check_errors("UnicodeDecodeWithOffsets", errors, replacement_char)}
    op = make_op("UnicodeDecodeWithOffsets", [text], attrs, name="UnicodeDecodeWithOffsets")
    return op.outputs[1], op.outputs[2]


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, replace_control_characters: bool = False,
                   name: str | None = None) -> Tensor:
    """The code points (int32) of a scalar string in ``input_encoding``
    (``tf.strings.unicode_decode``); invalid bytes give ``replacement_char`` (``errors=
    "replace"``), are skipped (``"ignore"``) or fail (``"strict"``)."""
    with name_scope(name, "UnicodeDecode", [input]):
        return _decode("unicode_decode", input, input_encoding, errors, replacement_char,
                       replace_control_characters)[0]


def unicode_decode_with_offsets(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                                replacement_char: int = 65533,
                                replace_control_characters: bool = False,
                                name: str | None = None) -> tuple[Tensor, Tensor]:
    """:func:`unicode_decode` and each character's starting byte offset (int64)
    (``tf.strings.unicode_decode_with_offsets``)."""
    with name_scope(name, "UnicodeDecodeWithOffsets", [input]):
        return _decode("unicode_decode_with_offsets", input, input_encoding, errors,
                       replacement_char, replace_control_characters)


def _encode(values: Tensor, splits: Tensor, encoding: str, errors: str, replacement_char: int,
            name: str) -> Tensor:
    attrs = {"output_encoding": encoding, "Tsplits": dtypes.int64,
             **_check_errors("UnicodeEncode", errors, replacement_char)}
    return make_tensor("UnicodeEncode", [values, splits], attrs, name=name)


def _split(what: str, input: Any, input_encoding: str, errors: str,  # noqa: A002
           replacement_char: int) -> tuple[Tensor, Tensor]:
    codes, offsets = _decode(what, input, input_encoding, errors, replacement_char, False)
    splits = range_ops.range(array_ops.size(codes, out_type=dtypes.int64) + 1, dtype=dtypes.int64)
    return _encode(codes, splits, input_encoding, errors, replacement_char, "UnicodeEncode"), offsets


def unicode_split(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                  replacement_char: int = 65533, name: str | None = None) -> Tensor:
    """The characters of a scalar string, each re-encoded in ``input_encoding``
    (``tf.strings.unicode_split``)."""
    with name_scope(name, "UnicodeSplit", [input]):
        return _split("unicode_split", input, input_encoding, errors, replacement_char)[0]


def unicode_split_with_offsets(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                               replacement_char: int = 65533,
                               name: str | None = None) -> tuple[Tensor, Tensor]:
    """:func:`unicode_split` and each character's starting byte offset
    (``tf.strings.unicode_split_with_offsets``)."""
    with name_scope(name, "UnicodeSplitWithOffsets", [input]):
        return _split("unicode_split_with_offsets", input, input_encoding, errors, replacement_char)


def bytes_split(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The bytes of a scalar string as a vector of one-byte strings (``tf.strings.bytes_split``)."""

    with name_scope(name, "StringsByteSplit", [input]):
        text = _scalar_input("bytes_split", input)
        return string_split(array_ops.expand_dims(text, 0), delimiter="", skip_empty=False).values


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, name: str | None = None) -> Tensor:
    """Dense code points ``[..., n]`` (int32) as strings ``[...]`` in ``output_encoding``
    (``tf.strings.unicode_encode``); invalid code points as in :func:`unicode_decode`."""
    with name_scope(name, "UnicodeEncode", [input]):
        codes = convert_to_tensor(input, dtype=dtypes.int32, name="input")
        if codes.shape.rank is None or codes.shape.rank == 0:
            raise InvalidArgumentError(f"unicode_encode: input must have a known rank >= 1, got "
                                       f"shape {codes.shape}")
        shape = array_ops.shape(codes, out_type=dtypes.int64)
        width = shape[-1]
        rows = reduction_ops.reduce_prod(shape[:-1])
        splits = range_ops.range(rows + 1, dtype=dtypes.int64) * width
        flat = _encode(array_ops.reshape(codes, [-1]), splits, output_encoding, errors,
                       replacement_char, "UnicodeEncode")
        return array_ops.reshape(flat, cast_ops.cast(shape[:-1], dtypes.int32))


def unicode_transcode(input: Any, input_encoding: str, output_encoding: str,  # noqa: A002
                      errors: str = "replace", replacement_char: int = 65533,
                      replace_control_characters: bool = False, name: str | None = None) -> Tensor:
    """Each string re-encoded from ``input_encoding`` to ``output_encoding``, same shape
    (``tf.strings.unicode_transcode``)."""
    text = convert_to_tensor(input, dtype=dtypes.string, name="input")
    attrs = {"input_encoding": input_encoding, "output_encoding": output_encoding,
             "replace_control_characters": bool(replace_control_characters),
             **_check_errors("UnicodeTranscode", errors, replacement_char)}
    return make_tensor("UnicodeTranscode", [text], attrs, name=name or "UnicodeTranscode")
