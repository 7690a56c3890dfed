"""Protocol buffer message classes built at import time from ``.proto`` text, in a private pool.

flowmesh speaks TensorFlow's file formats (``GraphDef``, ``MetaGraphDef``, checkpoint
bundles, ``tf.train.Example``) with real ``protobuf`` messages, but cannot import TensorFlow's
generated ``*_pb2`` modules (TensorFlow is not a dependency) and must not register
``tensorflow.GraphDef`` & co. in protobuf's *default* pool: a process that also imports
TensorFlow (the oracle tests) would clash on the duplicate full names. So every flowmesh
schema is added to :data:`POOL`, a :class:`~google.protobuf.descriptor_pool.DescriptorPool`
of its own, from the ``.proto`` source copied from TensorFlow (field names and numbers are
the contract; comments, options other than ``packed`` and ``reserved`` are ignored)::

    from flowmesh.protos.builder import build

    versions = build('''
        syntax = "proto3";
        package tensorflow;
        message VersionDef { int32 producer = 1; int32 min_consumer = 2;
                             repeated int32 bad_consumers = 3; }
    ''', "tensorflow/core/framework/versions.proto")
    versions.VersionDef(producer=27).SerializeToString()

``build`` returns a module-like namespace: top-level messages and enums by name, and enum
values as constants (like a generated ``_pb2`` module). ``import "path";`` names a file
built earlier (its types are resolved in :data:`POOL`); ``google/protobuf/any.proto`` and
``wrappers.proto`` are preloaded. Supported syntax: ``message`` (nested), ``enum``, ``repeated``, ``map<K, V>``,
``oneof``, proto3 ``optional`` (explicit presence), scalar types, ``[packed = ...]``.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory, wrappers_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

POOL = descriptor_pool.DescriptorPool()
"""The private pool holding every flowmesh schema (never protobuf's default pool)."""

_FDP = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "double": _FDP.TYPE_DOUBLE, "float": _FDP.TYPE_FLOAT, "int64": _FDP.TYPE_INT64,
    "uint64": _FDP.TYPE_UINT64, "int32": _FDP.TYPE_INT32, "fixed64": _FDP.TYPE_FIXED64,
    "fixed32": _FDP.TYPE_FIXED32, "bool": _FDP.TYPE_BOOL, "string": _FDP.TYPE_STRING,
    "bytes": _FDP.TYPE_BYTES, "uint32": _FDP.TYPE_UINT32, "sfixed32": _FDP.TYPE_SFIXED32,
    "sfixed64": _FDP.TYPE_SFIXED64, "sint32": _FDP.TYPE_SINT32, "sint64": _FDP.TYPE_SINT64,
}
_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|("(?:[^"\\]|\\.)*")|([A-Za-z_.][\w.]*|-?\d+\.?\d*|[{}<>=;,\[\]()])',
                    re.S)


def _preload_well_known() -> None:
    for module in (any_pb2, wrappers_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        POOL.Add(proto)


_preload_well_known()


def _tokenize(source: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None:
            raise ValueError(f"Unexpected character {source[pos]!r} in .proto source at offset {pos}")
        pos = match.end()
        token = match.group(1) or match.group(2)
        if token:
            tokens.append(token)
    return tokens


class _Parser:
    """Recursive descent over the tokens of one ``.proto`` file into a FileDescriptorProto."""

    def __init__(self, source: str, path: str):
        self.tokens = _tokenize(source)
        self.pos = 0
        self.file = descriptor_pb2.FileDescriptorProto(name=path, syntax="proto3")
        self.pending: list[tuple[str, Any]] = []  # (scope, FieldDescriptorProto) to resolve

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"{self.file.name}: expected {expected or 'a token'!r}, got {token!r} "
                             f"(token {self.pos})")
        self.pos += 1
        return token

    def skip_statement(self) -> None:
        while self.take() != ";":
            pass

    def parse(self) -> descriptor_pb2.FileDescriptorProto:
        while self.peek() is not None:
            word = self.take()
            if word == "syntax":
                self.take("=")
                self.file.syntax = self.take().strip('"')
                self.take(";")
            elif word == "package":
                self.file.package = self.take()
                self.take(";")
            elif word == "import":
                token = self.take()
                if token in ("public", "weak"):
                    token = self.take()
                self.file.dependency.append(token.strip('"'))
                self.take(";")
            elif word == "message":
                self.message(self.file.message_type.add(), self.file.package)
            elif word == "enum":
                self.enum(self.file.enum_type.add())
            elif word == "option":
                self.skip_statement()
            else:
                raise ValueError(f"{self.file.name}: unexpected {word!r} at file level")
        return self.file

    def enum(self, enum: Any) -> None:
        enum.name = self.take()
        self.take("{")
        while (token := self.take()) != "}":
            if token in ("option", "reserved"):
                self.skip_statement()
                continue
            self.take("=")
            enum.value.add(name=token, number=int(self.take()))
            self.field_options()
            self.take(";")

    def message(self, msg: Any, scope: str) -> None:
        msg.name = self.take()
        full = f"{scope}.{msg.name}" if scope else msg.name
        self.take("{")
        while (token := self.take()) != "}":
            if token == "message":
                self.message(msg.nested_type.add(), full)
            elif token == "enum":
                self.enum(msg.enum_type.add())
            elif token in ("option", "reserved", "extensions"):
                self.skip_statement()
            elif token == "oneof":
                self.oneof(msg, full)
            elif token == "map":
                self.map_field(msg, full)
            else:
                self.field(msg, full, token)
        for field in msg.field:  # proto3 ``optional``: synthetic oneofs follow the real ones
            if field.proto3_optional:
                field.oneof_index = len(msg.oneof_decl)
                msg.oneof_decl.add(name=f"_{field.name}")

    def oneof(self, msg: Any, scope: str) -> None:
        index = len(msg.oneof_decl)
        msg.oneof_decl.add(name=self.take())
        self.take("{")
        while (token := self.take()) != "}":
            if token == "option":
                self.skip_statement()
                continue
            self.field(msg, scope, token).oneof_index = index

    def field(self, msg: Any, scope: str, token: str) -> Any:
        label = _FDP.LABEL_OPTIONAL
        token_was_optional = token == "optional"
        if token in ("repeated", "optional", "required"):
            label = _FDP.LABEL_REPEATED if token == "repeated" else label
            token = self.take()
        name = self.take()
        self.take("=")
        field = msg.field.add(name=name, number=int(self.take()), label=label)
        if token_was_optional and self.file.syntax == "proto3":
            field.proto3_optional = True  # explicit presence, as protoc marks it
        self.set_type(field, token, scope)
        options = self.field_options()
        if "packed" in options:
            field.options.packed = options["packed"] == "true"
        self.take(";")
        return field

    def map_field(self, msg: Any, scope: str) -> None:
        self.take("<")
        key = self.take()
        self.take(",")
        value = self.take()
        self.take(">")
        name = self.take()
        self.take("=")
        number = int(self.take())
        self.field_options()
        self.take(";")
        entry = msg.nested_type.add(name="".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        entry_scope = f"{scope}.{entry.name}"
        self.set_type(entry.field.add(name="key", number=1, label=_FDP.LABEL_OPTIONAL), key, entry_scope)
        self.set_type(entry.field.add(name="value", number=2, label=_FDP.LABEL_OPTIONAL), value, entry_scope)
        field = msg.field.add(name=name, number=number, label=_FDP.LABEL_REPEATED, type=_FDP.TYPE_MESSAGE)
        field.type_name = f".{entry_scope}"

    def field_options(self) -> dict[str, str]:
        options: dict[str, str] = {}
        if self.peek() != "[":
            return options
        self.take("[")
        while True:
            key = self.take()
            self.take("=")
            options[key] = self.take()
            if self.take() == "]":
                return options

    def set_type(self, field: Any, type_name: str, scope: str) -> None:
        if type_name in _SCALARS:
            field.type = _SCALARS[type_name]
        else:
            self.pending.append((scope, field))
            field.type_name = type_name


def _local_types(file: Any) -> dict[str, bool]:
    """Full names of the messages (True) and enums (False) a file defines."""
    found: dict[str, bool] = {}

    def walk(prefix: str, messages: Any, enums: Any) -> None:
        for enum in enums:
            found[f"{prefix}{enum.name}"] = False
        for msg in messages:
            found[f"{prefix}{msg.name}"] = True
            walk(f"{prefix}{msg.name}.", msg.nested_type, msg.enum_type)

    walk(f"{file.package}." if file.package else "", file.message_type, file.enum_type)
    return found


def _pool_kind(full_name: str) -> bool | None:
    for finder, is_message in ((POOL.FindMessageTypeByName, True), (POOL.FindEnumTypeByName, False)):
        try:
            finder(full_name)
            return is_message
        except KeyError:
            pass
    return None


def _resolve(parser: _Parser) -> None:
    local = _local_types(parser.file)
    for scope, field in parser.pending:
        name = field.type_name
        candidates = [name[1:]] if name.startswith(".") else []
        if not candidates:
            parts = scope.split(".") if scope else []
            candidates = [".".join(parts[:i] + [name]) for i in range(len(parts), -1, -1)]
        for candidate in candidates:
            kind = local.get(candidate, None)
            kind = _pool_kind(candidate) if kind is None else kind
            if kind is not None:
                field.type_name = f".{candidate}"
                field.type = _FDP.TYPE_MESSAGE if kind else _FDP.TYPE_ENUM
                break
        else:
            raise ValueError(f"{parser.file.name}: unknown type {name!r} in {scope} "
                             f"(import the file that defines it and build that file first)")


def build(source: str, path: str) -> SimpleNamespace:
    """Adds the ``.proto`` ``source`` (file name ``path``) to :data:`POOL` and returns its
    message classes, enums and enum values by name, as a generated ``_pb2`` module has them.

    Building the same ``path`` twice returns the classes of the first build.

    Raises:
        ValueError: the source does not parse, or names a type no built file defines.
    """
    try:
        file_desc = POOL.FindFileByName(path)
    except KeyError:
        parser = _Parser(source, path)
        parser.parse()
        _resolve(parser)
        file_desc = POOL.Add(parser.file)
    namespace = SimpleNamespace(DESCRIPTOR=file_desc)
    for name, desc in file_desc.message_types_by_name.items():
        setattr(namespace, name, message_factory.GetMessageClass(desc))
    for name, enum in file_desc.enum_types_by_name.items():
        setattr(namespace, name, EnumTypeWrapper(enum))
        for value in enum.values:
            setattr(namespace, value.name, value.number)
    return namespace
