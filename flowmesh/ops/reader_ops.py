"""TF1 readers as graph ops: ``tf.TFRecordReader``, ``FixedLengthRecordReader``,
``TextLineReader``, ``WholeFileReader``, ``IdentityReader`` and their base ``tf.ReaderBase``.

A reader is a resource in its device's resource store (like a queue). ``read(queue)``
takes the next "work unit" (a file name) from a string queue when it has none, and
returns one record of it as ``(key, value)``; the key names where the record came from:

===========================  =============================  ===============================
reader                       key                            value
===========================  =============================  ===============================
``TFRecordReader``           ``"file:<byte offset>"``       the record (CRC-checked)
``TextLineReader``           ``"file:<line number>"``       the line without ``\\n``/``\\r\\n``
``FixedLengthRecordReader``  ``"file:<record number>"``     ``record_bytes`` bytes
``WholeFileReader``          ``"file"``                     the whole file
``IdentityReader``           the work unit                  the work unit
===========================  =============================  ===============================

Once the queue is closed and empty, reads fail with ``OutOfRangeError`` (the end of
the input). Kernels: ``flowmesh/kernels/reader_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.unsupported import LMDB, unsupported

_SCALAR = TensorShape([])
_READER_TYPES = ("TFRecordReaderV2", "FixedLengthRecordReaderV2", "TextLineReaderV2",
                 "WholeFileReaderV2", "IdentityReaderV2")


def _check_handles(op_type: str, inputs: Sequence[Tensor]) -> None:
    for tensor, what in zip(inputs[:2], ("reader", "queue")):
        if tensor.dtype != dtypes.resource:
            raise TypeError(f"{op_type}: the {what} must be a resource handle (a tf.ReaderBase / "
                            f"tf.QueueBase), got a {tensor.dtype.name} tensor '{tensor.name}'")


def _read_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _check_handles("ReaderReadV2", inputs)
    return [(dtypes.string, _SCALAR), (dtypes.string, _SCALAR)]


def _read_up_to_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _check_handles("ReaderReadUpToV2", inputs)
    return [(dtypes.string, TensorShape([None])), (dtypes.string, TensorShape([None]))]


for _op in _READER_TYPES:
    register_op(_op, lambda inputs, attrs: [(dtypes.resource, _SCALAR)], not_differentiable=True,
                stateful=True)
register_op("ReaderReadV2", _read_shape, not_differentiable=True, stateful=True)
register_op("ReaderReadUpToV2", _read_up_to_shape, not_differentiable=True, stateful=True)
for _op in ("ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"):
    register_op(_op, lambda inputs, attrs: [(dtypes.int64, _SCALAR)], not_differentiable=True,
                stateful=True)
register_op("ReaderSerializeStateV2", lambda inputs, attrs: [(dtypes.string, _SCALAR)],
            not_differentiable=True, stateful=True)
register_op("ReaderRestoreStateV2", lambda inputs, attrs: [], not_differentiable=True, stateful=True)
register_op("ReaderResetV2", lambda inputs, attrs: [], not_differentiable=True, stateful=True)


def _queue_ref(queue: Any) -> Tensor:
    if isinstance(queue, Tensor):
        return queue
    if hasattr(queue, "queue_ref"):
        return queue.queue_ref
    raise TypeError(f"A reader reads file names from a queue (e.g. tf.train.string_input_producer), got "
                    f"{type(queue).__name__}")


class ReaderBase:
    """Base class of the readers (``tf.ReaderBase``): records from work units in a queue.

    Args:
        reader_ref: the reader's resource handle.
        supports_serialize: whether :meth:`serialize_state` works for this reader.
    """

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Tensor:
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record as ``(key, value)`` string scalars.

        Args:
            queue: a string queue of work units (file names), or its handle.

        Returns:
            ``(key, value)``; at run time ``OutOfRangeError`` once the queue is closed and
            every work unit has been read.
        """
        op = make_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)], name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue: Any, num_records: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """Up to ``num_records`` records as ``(keys, values)`` string vectors; a batch ends
        at the end of a work unit (so it may be shorter)."""
        count = convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
        op = make_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue), count],
                     name=name or "ReaderReadUpToV2")
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> Tensor:
        """How many records this reader has produced (an int64 scalar)."""
        return make_tensor("ReaderNumRecordsProducedV2", [self._reader_ref],
                           name=name or "ReaderNumRecordsProducedV2")

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        """How many work units (files) this reader has finished (an int64 scalar)."""
        return make_tensor("ReaderNumWorkUnitsCompletedV2", [self._reader_ref],
                           name=name or "ReaderNumWorkUnitsCompletedV2")

    def serialize_state(self, name: str | None = None) -> Tensor:
        """The reader's state as a string (``UnimplementedError`` at run time for readers
        that do not support it, as in TensorFlow)."""
        return make_tensor("ReaderSerializeStateV2", [self._reader_ref], name=name or "ReaderSerializeStateV2")

    def restore_state(self, state: Any, name: str | None = None) -> Operation:
        """Restores a state from :meth:`serialize_state`."""
        value = convert_to_tensor(state, dtype=dtypes.string, name="state")
        return make_op("ReaderRestoreStateV2", [self._reader_ref, value], name=name or "ReaderRestoreStateV2")

    def reset(self, name: str | None = None) -> Operation:
        """Forgets the current work unit and zeroes the counters."""
        return make_op("ReaderResetV2", [self._reader_ref], name=name or "ReaderResetV2")


def _reader(op_type: str, attrs: dict[str, Any], name: str | None) -> Tensor:
    return make_tensor(op_type, [], {"container": "", "shared_name": "", **attrs}, name=name or op_type)


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (``tf.TFRecordReader``).

    Args:
        name: the op name.
        options: ``tf.io.TFRecordOptions`` or a compression type (``"ZLIB"``, ``"GZIP"``).
    """

    def __init__(self, name: str | None = None, options: Any = None):
        super().__init__(_reader("TFRecordReaderV2", {"compression_type": _compression(options)}, name))


def _compression(options: Any) -> str:
    """``""``/``"ZLIB"``/``"GZIP"`` from ``TFRecordOptions``, a ``TFRecordCompressionType`` or a string."""
    if options is None:
        return ""
    if hasattr(options, "compression_type"):
        return _compression(options.compression_type)
    if isinstance(options, int) and not isinstance(options, bool) and options in (0, 1, 2):
        return ("", "ZLIB", "GZIP")[options]
    if isinstance(options, str) and options.upper() in ("", "ZLIB", "GZIP"):
        return options.upper()
    raise ValueError(f"TFRecordReader: unknown compression {options!r}; use None, \"ZLIB\" or \"GZIP\" "
                     "(or tf.io.TFRecordOptions)")


class FixedLengthRecordReader(ReaderBase):
    """Fixed-size records between a header and a footer (``tf.FixedLengthRecordReader``).

    Args:
        record_bytes: the size of a record.
        header_bytes: bytes skipped at the start of each file.
        footer_bytes: bytes ignored at the end of each file.
        hop_bytes: the distance between record starts (``0``/``None``: ``record_bytes``).
        name: the op name.
        encoding: ``""``, ``"ZLIB"`` or ``"GZIP"``.

    Raises:
        ValueError: ``record_bytes`` is not positive.
    """

    def __init__(self, record_bytes: int, header_bytes: int | None = None, footer_bytes: int | None = None,
                 hop_bytes: int | None = None, name: str | None = None, encoding: str | None = None):
        if int(record_bytes) <= 0:
            raise ValueError(f"FixedLengthRecordReader: record_bytes must be positive, got {record_bytes}")
        attrs = {"record_bytes": int(record_bytes), "header_bytes": int(header_bytes or 0),
                 "footer_bytes": int(footer_bytes or 0), "hop_bytes": int(hop_bytes or 0),
                 "encoding": encoding or ""}
        super().__init__(_reader("FixedLengthRecordReaderV2", attrs, name))


class TextLineReader(ReaderBase):
    """The lines of text files (``tf.TextLineReader``).

    Args:
        skip_header_lines: lines skipped at the start of each file.
        name: the op name.
    """

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None):
        super().__init__(_reader("TextLineReaderV2", {"skip_header_lines": int(skip_header_lines or 0)}, name))


class WholeFileReader(ReaderBase):
    """Each file as one record, keyed by its name (``tf.WholeFileReader``)."""

    def __init__(self, name: str | None = None):
        super().__init__(_reader("WholeFileReaderV2", {}, name))


class IdentityReader(ReaderBase):
    """Each work unit as its own key and value (``tf.IdentityReader``); its state can be
    serialized and restored."""

    def __init__(self, name: str | None = None):
        super().__init__(_reader("IdentityReaderV2", {}, name), supports_serialize=True)


LMDBReader = unsupported("LMDBReader", LMDB)

__all__ = ["FixedLengthRecordReader", "LMDBReader", "IdentityReader", "ReaderBase", "TFRecordReader", "TextLineReader",
           "WholeFileReader"]
