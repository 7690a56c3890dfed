"""Reading event files back: ``tf.train.summary_iterator``."""

from __future__ import annotations

from collections.abc import Iterator

from flowmesh.formats.tfrecord import read_stream_records
from flowmesh.gfile import GFile
from flowmesh.protos.summary import Event


def summary_iterator(path: str) -> Iterator[Event]:
    """The ``Event`` records of one event file, in order (the version event first).

    Raises:
        DataLossError: a record is corrupted or is not an ``Event``.
    """
    with GFile(path, "rb") as f:
        for data in read_stream_records(f, path):
            yield Event.FromString(data)
