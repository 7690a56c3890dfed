"""``tf.io.TFRecordWriter`` / ``tf.python_io``: writing and reading TFRecord files in Python.

The bytes are TensorFlow's (uncompressed files are identical; ZLIB/GZIP files are one
deflate stream of the same framing, readable by either side). See
``flowmesh/formats/tfrecord.py`` for the format and the checks.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

from flowmesh.formats.tfrecord import RecordWriter, check_compression, read_records


class TFRecordCompressionType(enum.IntEnum):
    """``tf.io.TFRecordCompressionType``."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: the compression of a record file.

    Args:
        compression_type: a :class:`TFRecordCompressionType` or ``""``/``"ZLIB"``/``"GZIP"``.
        compression_level: zlib's level (0-9; ``None``: zlib's default).
    """

    compression_type_map = {"ZLIB": TFRecordCompressionType.ZLIB,
                            "GZIP": TFRecordCompressionType.GZIP,
                            "": TFRecordCompressionType.NONE}

    def __init__(self, compression_type: Any = None, flush_mode: Any = None,
                 input_buffer_size: Any = None, output_buffer_size: Any = None,
                 window_bits: Any = None, compression_level: int | None = None,
                 compression_method: Any = None, mem_level: Any = None,
                 compression_strategy: Any = None):
        self.compression_type = compression_type
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for options, a type or a string."""
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, TFRecordCompressionType):
            return _NAMES[options]
        if isinstance(options, int) and not isinstance(options, bool):
            return _NAMES[TFRecordCompressionType(options)]
        return check_compression(options)


class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``); a context manager.

    Args:
        path: a local path or fsspec URL (created or overwritten).
        options: ``TFRecordOptions``, a compression type or ``"ZLIB"``/``"GZIP"``.

    Example::

        with tf.io.TFRecordWriter("/tmp/data.tfrecord") as writer:
            writer.write(example.SerializeToString())
    """

    def __init__(self, path: str, options: Any = None):
        compression = TFRecordOptions.get_compression_type_string(options)
        level = getattr(options, "compression_level", None)
        self._writer = RecordWriter(str(path), compression, -1 if level is None else level)

    def write(self, record: Any) -> None:
        """Appends one record (``bytes``, or ``str`` encoded as UTF-8)."""
        self._writer.write(record.encode() if isinstance(record, str) else bytes(record))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def tf_record_iterator(path: str, options: Any = None) -> Iterator[bytes]:
    """The records of a TFRecord file (``tf.python_io.tf_record_iterator``).

    Raises:
        NotFoundError: the file is missing.
        DataLossError: a corrupted or truncated record (file and byte offset).
    """
    return read_records(str(path), TFRecordOptions.get_compression_type_string(options))
