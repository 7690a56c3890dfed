"""The protocol buffer messages of TensorBoard event files, without the protobuf package.

TensorBoard reads ``Event`` records (``tensorflow/core/util/event.proto``) whose payload
is a ``Summary`` (``tensorflow/core/framework/summary.proto``). flowmesh writes and reads
the few messages it needs with a small declarative encoder of the protobuf wire format:
a message class lists its fields (number, kind, repetition, oneof group) and
:class:`Message` serializes and parses them. It behaves like the generated classes where
user code touches them::

    summary = tf.Summary()
    summary.value.add(tag="accuracy", simple_value=0.93)
    writer.add_summary(summary, global_step=step)
    tf.Summary.FromString(sess.run(merged)).value[0].tag

Fields are written in field-number order, repeated numbers packed, proto3 defaults
omitted (oneof members are written whenever set), unknown fields skipped when parsing;
``SerializeToString`` therefore gives the bytes TensorFlow's C++ serializer gives.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, ClassVar

from flowmesh.errors import DataLossError

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_NUMERIC = {"double": ("<d", _FIXED64), "float": ("<f", _FIXED32)}
_INTEGER = ("int32", "int64", "enum", "bool")


@dataclass(frozen=True)
class Field:
    """One field of a message: its number and kind (``double float int32 int64 enum bool
    string bytes message``), the message class for ``message`` fields, whether it is
    repeated, and the oneof group it belongs to (such fields have presence)."""

    number: int
    kind: str
    message: Any = None
    repeated: bool = False
    oneof: str | None = None

    def default(self) -> Any:
        if self.repeated:
            return Repeated(self.message)
        if self.oneof is not None or self.kind == "message":
            return None
        return {"string": "", "bytes": b"", "bool": False}.get(self.kind, 0.0 if self.kind in _NUMERIC else 0)


class Repeated(list):
    """A repeated field; ``add(**fields)`` appends a new message, as in protobuf."""

    def __init__(self, message: Any = None, items: Any = ()):
        super().__init__(items)
        self._message = message

    def add(self, **fields: Any) -> Any:
        if self._message is None:
            raise TypeError("add() is for repeated message fields; use append() for values")
        item = self._message(**fields)
        self.append(item)
        return item


class Message:
    """Base of the message classes: keyword construction, equality, wire (de)serialization."""

    FIELDS: ClassVar[dict[str, Field]] = {}

    def __init__(self, **fields: Any):
        for name, spec in self.FIELDS.items():
            object.__setattr__(self, name, spec.default())
        for name, value in fields.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        spec = self.FIELDS.get(name)
        if spec is None:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}; fields: {sorted(self.FIELDS)}")
        if spec.repeated:
            value = Repeated(spec.message, value)
        elif spec.oneof is not None and value is not None:
            for other, s in self.FIELDS.items():
                if s.oneof == spec.oneof and other != name:
                    object.__setattr__(self, other, None)
        object.__setattr__(self, name, value)

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        if name not in self.FIELDS:
            raise ValueError(f"{type(self).__name__} has no field {name!r}")
        return getattr(self, name) is not None and not self.FIELDS[name].repeated

    def WhichOneof(self, group: str) -> str | None:  # noqa: N802 - protobuf's name
        return next((n for n, s in self.FIELDS.items() if s.oneof == group and getattr(self, n) is not None),
                    None)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    def __repr__(self) -> str:
        shown = [f"{n}={getattr(self, n)!r}" for n, s in self.FIELDS.items()
                 if getattr(self, n) is not None and getattr(self, n) != s.default()]
        return f"{type(self).__name__}({', '.join(shown)})"

    # --- writing -----------------------------------------------------------------------
    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        out = bytearray()
        for name, spec in sorted(self.FIELDS.items(), key=lambda item: item[1].number):
            value = getattr(self, name)
            if spec.repeated:
                if value:
                    _write_repeated(out, spec, value)
            elif value is not None and (spec.oneof is not None or value != spec.default()):
                _write_one(out, spec, value)
        return bytes(out)

    # --- reading -----------------------------------------------------------------------
    @classmethod
    def FromString(cls, data: bytes) -> Any:  # noqa: N802 - protobuf's name
        message = cls()
        message.ParseFromString(data)
        return message

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802 - protobuf's name
        """Reads ``data`` into this message (replacing its fields).

        Raises:
            DataLossError: the bytes are not a valid encoding of this message.
        """
        self.__init__()  # type: ignore[misc]
        by_number = {spec.number: (name, spec) for name, spec in self.FIELDS.items()}
        view = memoryview(bytes(data))
        pos = 0
        try:
            while pos < len(view):
                key, pos = _read_varint(view, pos)
                number, wire = key >> 3, key & 7
                found = by_number.get(number)
                if found is None:
                    pos = _skip(view, pos, wire)
                    continue
                name, spec = found
                pos = self._read_field(view, pos, wire, name, spec)
        except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise DataLossError(None, None, f"Cannot parse {type(self).__name__}: {exc}") from None

    def _read_field(self, view: memoryview, pos: int, wire: int, name: str, spec: Field) -> int:
        if spec.repeated and wire == _BYTES and spec.kind in _NUMERIC:  # packed numbers
            size, pos = _read_varint(view, pos)
            fmt = _NUMERIC[spec.kind][0]
            getattr(self, name).extend(v for (v,) in struct.iter_unpack(fmt, view[pos:pos + size]))
            return pos + size
        if spec.repeated and wire == _BYTES and spec.kind in _INTEGER:
            size, pos = _read_varint(view, pos)
            end = pos + size
            while pos < end:
                value, pos = _read_varint(view, pos)
                getattr(self, name).append(_from_varint(spec.kind, value))
            return pos
        value, pos = _read_value(view, pos, wire, spec)
        if spec.repeated:
            getattr(self, name).append(value)
        else:
            setattr(self, name, value)
        return pos


def _write_repeated(out: bytearray, spec: Field, values: list[Any]) -> None:
    if spec.kind in _NUMERIC:
        fmt = _NUMERIC[spec.kind][0]
        payload = b"".join(struct.pack(fmt, v) for v in values)
        _write_key(out, spec.number, _BYTES)
        _write_varint(out, len(payload))
        out += payload
    elif spec.kind in _INTEGER:
        payload = bytearray()
        for v in values:
            _write_varint(payload, _to_varint(v))
        _write_key(out, spec.number, _BYTES)
        _write_varint(out, len(payload))
        out += payload
    else:
        for v in values:
            _write_one(out, spec, v)


def _write_one(out: bytearray, spec: Field, value: Any) -> None:
    if spec.kind in _NUMERIC:
        fmt, wire = _NUMERIC[spec.kind]
        _write_key(out, spec.number, wire)
        out += struct.pack(fmt, value)
    elif spec.kind in _INTEGER:
        _write_key(out, spec.number, _VARINT)
        _write_varint(out, _to_varint(value))
    else:
        if spec.kind == "string":
            payload = value.encode() if isinstance(value, str) else bytes(value)
        elif spec.kind == "bytes":
            payload = bytes(value)
        else:
            payload = value.SerializeToString()
        _write_key(out, spec.number, _BYTES)
        _write_varint(out, len(payload))
        out += payload


def _read_value(view: memoryview, pos: int, wire: int, spec: Field) -> tuple[Any, int]:
    if spec.kind in _NUMERIC:
        fmt, expected = _NUMERIC[spec.kind]
        _expect(wire, expected, spec)
        size = struct.calcsize(fmt)
        return struct.unpack_from(fmt, view, pos)[0], pos + size
    if spec.kind in _INTEGER:
        _expect(wire, _VARINT, spec)
        value, pos = _read_varint(view, pos)
        return _from_varint(spec.kind, value), pos
    _expect(wire, _BYTES, spec)
    size, pos = _read_varint(view, pos)
    if pos + size > len(view):
        raise ValueError(f"field {spec.number} runs past the end of the message")
    raw = bytes(view[pos:pos + size])
    if spec.kind == "string":
        return raw.decode("utf-8"), pos + size
    if spec.kind == "bytes":
        return raw, pos + size
    return spec.message.FromString(raw), pos + size


def _expect(wire: int, expected: int, spec: Field) -> None:
    if wire != expected:
        raise ValueError(f"field {spec.number} ({spec.kind}) has wire type {wire}, expected {expected}")


def _to_varint(value: Any) -> int:
    value = int(value)
    return value + (1 << 64) if value < 0 else value  # negative ints take ten bytes


def _from_varint(kind: str, value: int) -> Any:
    if kind == "bool":
        return bool(value)
    bits = 32 if kind in ("int32", "enum") and value < (1 << 32) else 64
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _write_key(out: bytearray, number: int, wire: int) -> None:
    _write_varint(out, (number << 3) | wire)


def _write_varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(view: memoryview, pos: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        byte = view[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _skip(view: memoryview, pos: int, wire: int) -> int:
    if wire == _VARINT:
        return _read_varint(view, pos)[1]
    if wire == _FIXED64:
        return pos + 8
    if wire == _FIXED32:
        return pos + 4
    if wire == _BYTES:
        size, pos = _read_varint(view, pos)
        return pos + size
    raise ValueError(f"unsupported wire type {wire}")


# --- the messages ----------------------------------------------------------------------------
class HistogramProto(Message):
    FIELDS = {"min": Field(1, "double"), "max": Field(2, "double"), "num": Field(3, "double"),
              "sum": Field(4, "double"), "sum_squares": Field(5, "double"),
              "bucket_limit": Field(6, "double", repeated=True), "bucket": Field(7, "double", repeated=True)}


class SummaryMetadata(Message):
    class PluginData(Message):
        FIELDS = {"plugin_name": Field(1, "string"), "content": Field(2, "bytes")}

    FIELDS = {"plugin_data": Field(1, "message", PluginData), "display_name": Field(2, "string"),
              "summary_description": Field(3, "string"), "data_class": Field(4, "enum")}


class SummaryImage(Message):
    """``Summary.Image``: an encoded (PNG) image."""

    FIELDS = {"height": Field(1, "int32"), "width": Field(2, "int32"), "colorspace": Field(3, "int32"),
              "encoded_image_string": Field(4, "bytes")}


class SummaryAudio(Message):
    """``Summary.Audio``: an encoded (WAV) clip."""

    FIELDS = {"sample_rate": Field(1, "float"), "num_channels": Field(2, "int64"),
              "length_frames": Field(3, "int64"), "encoded_audio_string": Field(4, "bytes"),
              "content_type": Field(5, "string")}


class _TensorProtoField:
    """A ``TensorProto`` field (``tensor.proto``'s protobuf class, imported when used)."""

    @staticmethod
    def FromString(data: bytes) -> Any:  # noqa: N802 - protobuf's name
        from flowmesh.protos.tensor import TensorProto

        return TensorProto.FromString(data)


class SummaryValue(Message):
    """``Summary.Value``: one tagged value (a scalar, a histogram, an image, a clip or a
    tensor)."""

    FIELDS = {"tag": Field(1, "string"),
              "simple_value": Field(2, "float", oneof="value"),
              "obsolete_old_style_histogram": Field(3, "bytes", oneof="value"),
              "image": Field(4, "message", SummaryImage, oneof="value"),
              "histo": Field(5, "message", HistogramProto, oneof="value"),
              "audio": Field(6, "message", SummaryAudio, oneof="value"),
              "node_name": Field(7, "string"),
              "tensor": Field(8, "message", _TensorProtoField, oneof="value"),
              "metadata": Field(9, "message", SummaryMetadata)}


class SummaryDescription(Message):
    """``tf.summary.SummaryDescription``: a hint of how a ``TensorSummary`` is to be shown."""

    FIELDS = {"type_hint": Field(1, "string")}


class TaggedRunMetadata(Message):
    """``tf.summary.TaggedRunMetadata``: a serialized ``RunMetadata`` under a tag (an
    ``Event`` field; TensorBoard shows it with the graph)."""

    FIELDS = {"tag": Field(1, "string"), "run_metadata": Field(2, "bytes")}


class Summary(Message):
    """``tf.Summary``: what one summary op (or ``tf.summary.merge``) produces."""

    Image = SummaryImage
    Audio = SummaryAudio
    Value = SummaryValue
    FIELDS = {"value": Field(1, "message", SummaryValue, repeated=True)}


class SessionLog(Message):
    STATUS_UNSPECIFIED, START, STOP, CHECKPOINT = 0, 1, 2, 3
    FIELDS = {"status": Field(1, "enum"), "checkpoint_path": Field(2, "string"), "msg": Field(3, "string")}


class Event(Message):
    FIELDS = {"wall_time": Field(1, "double"), "step": Field(2, "int64"),
              "file_version": Field(3, "string", oneof="what"),
              "graph_def": Field(4, "bytes", oneof="what"),
              "summary": Field(5, "message", Summary, oneof="what"),
              "session_log": Field(7, "message", SessionLog, oneof="what"),
              "tagged_run_metadata": Field(8, "message", TaggedRunMetadata, oneof="what"),
              "meta_graph_def": Field(9, "bytes", oneof="what")}


class NodeDef(Message):
    """The parts of a graph node TensorBoard's graph view draws (attrs are left out)."""

    FIELDS = {"name": Field(1, "string"), "op": Field(2, "string"), "input": Field(3, "string", repeated=True),
              "device": Field(4, "string")}


class VersionDef(Message):
    FIELDS = {"producer": Field(1, "int32"), "min_consumer": Field(2, "int32")}


class GraphDef(Message):
    FIELDS = {"node": Field(1, "message", NodeDef, repeated=True), "versions": Field(4, "message", VersionDef)}
