"""``tf.summary.FileWriter``: event files that TensorBoard reads.

A writer owns one file ``<logdir>/events.out.tfevents.<time>.<host><suffix>`` whose first
record is the ``brain.Event:2`` version event; every later record is an ``Event`` holding
a summary, a session log or the graph (TFRecord framing: :mod:`flowmesh.formats.tfrecord`).
(a writer reopened in the same second appends ``.1``, ``.2``... rather than truncating).
Events are appended to an OS-buffered file under a lock, so ``add_*`` never blocks on the
disk; a daemon thread flushes every ``flush_secs``, and ``flush``/``close`` flush at once.
``FileWriterCache.get(logdir)`` shares one writer per directory between hooks (the step
counter and the summary saver of ``MonitoredTrainingSession`` write into the same file).

Example:
    >>> writer = tf.summary.FileWriter("/tmp/logs", sess.graph)
    >>> for step in range(100):
    ...     summary, _ = sess.run([merged, train_op])
    ...     writer.add_summary(summary, step)
    >>> writer.close()
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import numpy as np

from flowmesh.formats import filesystem as fs
from flowmesh.formats.tfrecord import encode_record
from flowmesh.gfile import GFile
from flowmesh.protos.summary import Event, SessionLog, Summary, TaggedRunMetadata

FILE_VERSION = "brain.Event:2"


class FileWriter:
    """Writes summaries, session logs and the graph to an event file in ``logdir``.

    Args:
        logdir: the directory (created when missing; local path or fsspec URL).
        graph: a ``tf.Graph`` to write for TensorBoard's graph view.
        max_queue: accepted for compatibility (events go to an OS-buffered file).
        flush_secs: how often pending events are flushed to disk.
        graph_def: a ``GraphDef`` (or its bytes) to write instead of ``graph``.
        filename_suffix: appended to the event file's name.
        session: not supported (TensorFlow 2's summary-op writer).

    Raises:
        ValueError: ``session`` is given.
    """

    def __init__(self, logdir: str, graph: Any = None, max_queue: int = 10, flush_secs: float = 120,
                 graph_def: Any = None, filename_suffix: str | None = None, session: Any = None):
        if session is not None:
            raise ValueError("FileWriter(session=...) (writing through summary ops) is not supported; "
                             "fetch the summaries and call add_summary instead")
        self._logdir = str(logdir)
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._file: Any = None
        self._flusher: threading.Thread | None = None
        self._closed = True
        self.reopen()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    # --- events --------------------------------------------------------------------------
    def add_summary(self, summary: Any, global_step: int | None = None) -> None:
        """Adds a ``tf.Summary`` or its serialized bytes (what a summary op returns)."""
        if not isinstance(summary, Summary):
            summary = Summary.FromString(_as_bytes(summary))
        self.add_event(Event(summary=summary), global_step)

    def add_session_log(self, session_log: SessionLog, global_step: int | None = None) -> None:
        """Adds a ``tf.SessionLog`` (START, STOP, CHECKPOINT)."""
        self.add_event(Event(session_log=session_log), global_step)

    def add_graph(self, graph: Any, global_step: int | None = None, graph_def: Any = None) -> None:
        """Adds the graph (its ops, inputs and devices) for TensorBoard's graph view."""
        if graph_def is None:
            graph_def = graph.as_graph_def()
        data = graph_def if isinstance(graph_def, (bytes, bytearray)) else graph_def.SerializeToString()
        self.add_event(Event(graph_def=bytes(data)), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: int | None = None) -> None:
        """Adds a traced step's ``RunMetadata`` (or its serialized bytes) under ``tag``, for
        TensorBoard's graph view ("Session runs": compute time per node).

        Example:
            >>> options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            >>> metadata = tf.RunMetadata()
            >>> sess.run(train_op, options=options, run_metadata=metadata)
            >>> writer.add_run_metadata(metadata, "step%d" % step, step)
        """
        data = run_metadata if isinstance(run_metadata, (bytes, bytearray)) else run_metadata.SerializeToString()
        tagged = TaggedRunMetadata(tag=str(tag), run_metadata=bytes(data))
        self.add_event(Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event: Event, global_step: int | None = None) -> None:
        """Writes ``event`` (stamped with the current wall time, and ``global_step``)."""
        event.wall_time = time.time()
        if global_step is not None:
            event.step = int(global_step)
        self._write(encode_record(event.SerializeToString()))

    def _write(self, record: bytes) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"FileWriter for {self._logdir} is closed; call reopen() first")
            self._file.write(record)

    # --- lifecycle -----------------------------------------------------------------------
    def get_logdir(self) -> str:
        return self._logdir

    def flush(self) -> None:
        """Writes every pending event to disk."""
        with self._lock:
            if not self._closed:
                self._file.flush()

    def close(self) -> None:
        """Flushes and closes the file; ``reopen`` starts a new one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._file.close()

    def reopen(self) -> None:
        """Opens a new event file after ``close`` (no-op while open)."""
        with self._lock:
            if not self._closed:
                return
            self._file = GFile(self._new_file_path(), "wb")
            self._file.write(encode_record(Event(wall_time=time.time(), file_version=FILE_VERSION)
                                           .SerializeToString()))
            self._file.flush()
            self._closed = False
            if self._flusher is None or not self._flusher.is_alive():
                self._flusher = threading.Thread(target=self._flush_periodically, daemon=True,
                                                 name="flowmesh-summary-flush")
                self._flusher.start()

    def _new_file_path(self) -> str:
        """``events.out.tfevents.<seconds>.<host><suffix>``; a writer reopened within the same
        second (or a second writer) gets ``.1``, ``.2``... appended instead of truncating it."""
        fs.makedirs(self._logdir)
        base = fs.join(self._logdir, f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}"
                                     f"{self._suffix}")
        path, count = base, 0
        while fs.exists(path):
            count += 1
            path = f"{base}.{count}"
        return path

    def _flush_periodically(self) -> None:
        while True:
            time.sleep(self._flush_secs)
            with self._lock:
                if self._closed:
                    return
                self._file.flush()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FileWriterCache:
    """One shared :class:`FileWriter` per log directory (``tf.summary.FileWriterCache``)."""

    _writers: dict[str, FileWriter] = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, logdir: str) -> FileWriter:
        with cls._lock:
            writer = cls._writers.get(str(logdir))
            if writer is None:
                writer = cls._writers[str(logdir)] = FileWriter(logdir)
            return writer

    @classmethod
    def clear(cls) -> None:
        """Closes and forgets every cached writer."""
        with cls._lock:
            writers, cls._writers = list(cls._writers.values()), {}
        for writer in writers:
            writer.close()


def _as_bytes(value: Any) -> bytes:
    """Serialized summary bytes, or a fetched string scalar (NumPy object array), as bytes."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    item = np.asarray(value, dtype=object).reshape(-1)
    if item.size == 1 and isinstance(item[0], (bytes, bytearray)):
        return bytes(item[0])
    raise TypeError(f"add_summary expects a tf.Summary or its serialized bytes, got {type(value).__name__}")
