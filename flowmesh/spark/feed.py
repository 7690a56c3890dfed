"""Feeding a Spark partition to the TensorFlow node that runs beside it (InputMode.SPARK).

The Spark task (the parent) reads its partition's rows and puts them, in chunks, on a
bounded queue; the node (the forked child) takes them with ``DataFeed.next_batch``.
The bound is the flow control: the parent reads no further ahead than ``QUEUE_CHUNKS``
chunks, so a slow trainer never makes the task buffer its whole partition.

Epochs line up with batches: the rows of one epoch end with an ``epoch`` marker, and
``next_batch`` returns the partial batch left at the end of each epoch. The first epoch
streams from Spark; later epochs replay the rows from a private spill file the first one
wrote, so every row is fed exactly once per epoch without recomputing the partition.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import queue
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

QUEUE_CHUNKS = 8  # chunks in flight between the Spark task and its node
CHUNK_ROWS = 512
_FORK = mp.get_context("fork")
_ROWS, _COLUMNS, _EPOCH, _DONE = "rows", "columns", "epoch", "done"


class FeedChannel:
    """The queues between one Spark task and its node (``ctx.mgr`` in the node).

    Created by the task before the fork, so both ends share them.
    """

    def __init__(self) -> None:
        self.input: Any = _FORK.Queue(QUEUE_CHUNKS)
        self.output: Any = _FORK.Queue()
        self.stop_feeding: Any = _FORK.Event()


class DataFeed:
    """TensorFlowOnSpark's ``TFNode.DataFeed``: the node's end of an InputMode.SPARK feed.

    Args:
        mgr: ``ctx.mgr`` of the node.
        train_mode: False for ``cluster.inference``: the node must answer every row with
            ``batch_results``.
        qname_in, qname_out: accepted for compatibility (one input and one output queue).
        input_mapping: optional ``{column: tensor_name}``; ``next_batch`` then returns a
            dict of column lists keyed by tensor name (rows are tuples in column order).
    """

    def __init__(self, mgr: FeedChannel, train_mode: bool = True, qname_in: str = "input",
                 qname_out: str = "output", input_mapping: dict[str, str] | None = None):
        if not isinstance(mgr, FeedChannel):
            raise TypeError("DataFeed needs ctx.mgr of a node started with InputMode.SPARK "
                            f"(got {type(mgr).__name__}): read files with tf.data in TENSORFLOW mode")
        self._mgr = mgr
        self.train_mode = train_mode
        self._mapping = dict(input_mapping) if input_mapping else None
        self._buffer: deque[Any] = deque()
        self._done = False
        self.epoch = 0  # epochs completely consumed so far

    def next_batch(self, batch_size: int) -> list[Any] | dict[str, list[Any]]:
        """Up to ``batch_size`` rows; fewer at the end of an epoch, none when done."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        rows: list[Any] = []
        while len(rows) < batch_size:
            if self._buffer:
                take = min(batch_size - len(rows), len(self._buffer))
                rows.extend(self._buffer.popleft() for _ in range(take))
            elif self._done:
                break
            elif not self._take() and rows:
                break  # an epoch ended: its last, partial batch
        return self._columns(rows) if self._mapping else rows

    def should_stop(self) -> bool:
        """True once the feed is exhausted (or ``terminate`` was called); waits for the
        next rows when none are buffered, as ``next_batch`` would."""
        while not self._buffer and not self._done:
            self._take()
        return self._done and not self._buffer

    def batch_results(self, results: Iterable[Any]) -> None:
        """Returns one result per row fed (``cluster.inference``), in row order."""
        self._mgr.output.put(list(results))

    def terminate(self) -> None:
        """Stops the feed early (e.g. the node reached its last step)."""
        self._mgr.stop_feeding.set()
        self._done = True
        self._buffer.clear()

    def _take(self) -> bool:
        """Moves the next message into the buffer; False at an epoch's end or the end."""
        kind, payload = self._mgr.input.get()
        if kind == _ROWS:
            self._buffer.extend(payload)
            return True
        if kind == _COLUMNS:
            self._buffer.extend(unpack_columns(payload))
            return True
        if kind == _EPOCH:
            self.epoch += 1
        else:
            self._done = True
        return False

    def _columns(self, rows: list[Any]) -> dict[str, list[Any]]:
        assert self._mapping is not None
        names = list(self._mapping.values())
        columns: dict[str, list[Any]] = {name: [] for name in names}
        for row in rows:
            if len(row) != len(names):
                raise ValueError(f"input_mapping names {len(names)} columns {list(self._mapping)} "
                                 f"but a row has {len(row)} values")
            for name, value in zip(names, row):
                columns[name].append(value)
        return columns


class Feeder:
    """The Spark task's end: puts ``num_epochs`` passes over ``rows`` on the channel.

    ``rows`` are rows, or with ``packed`` the messages :func:`pack_chunks` made of them
    (where the data was, before the shuffle). ``alive()`` tells whether the node can still
    consume; a node that stops consuming for ``feed_timeout`` seconds fails the feed with
    ``TimeoutError``.
    """

    def __init__(self, channel: FeedChannel, rows: Iterable[Any], num_epochs: int,
                 feed_timeout: float, alive: Callable[[], bool], name: str, packed: bool = False):
        self._channel = channel
        self._rows = rows if packed else pack_chunks(rows)
        self._epochs = max(1, num_epochs)
        self._timeout = feed_timeout
        self._alive = alive
        self._name = name
        self.rows_fed = 0

    def run(self) -> None:
        """Feeds every epoch, then the end marker (stops early on ``terminate``)."""
        with tempfile.TemporaryFile(prefix="flowmesh-feed-") as spill:
            for epoch in range(self._epochs):
                messages = self._rows if epoch == 0 else _replay(spill)
                for message in messages:
                    if epoch == 0 and self._epochs > 1:
                        pickle.dump(message, spill, protocol=pickle.HIGHEST_PROTOCOL)
                    if not self._put(message):
                        return
                    self.rows_fed += _row_count(message)
                if not self._put((_EPOCH, epoch)):
                    return
        self._put((_DONE, None))

    def _put(self, message: tuple[str, Any]) -> bool:
        waited = 0.0
        while not self._channel.stop_feeding.is_set():
            try:
                self._channel.input.put(message, timeout=0.5)
                return True
            except queue.Full:
                waited += 0.5
            if not self._alive():
                return False  # the node ended; the task reports its outcome
            if waited >= self._timeout:
                raise TimeoutError(f"{self._name} took no input for {self._timeout:.0f} s "
                                   "(feed_timeout): is its map_fun calling DataFeed.next_batch?")
        return False


def pack_chunks(rows: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """``rows`` in chunks of ``CHUNK_ROWS``, each packed by :func:`pack_columns`."""
    return (pack_columns(chunk) for chunk in _chunks(rows))


def _row_count(message: tuple[str, Any]) -> int:
    kind, payload = message
    return len(payload[0]) if kind == _COLUMNS else len(payload)


def pack_columns(chunk: list[Any]) -> tuple[str, Any]:
    """A chunk as one array per column when its rows are plain tuples of same-shaped
    arrays and scalars (one large array pickles ~30x faster than 512 small ones), else
    as the rows themselves."""
    first = chunk[0]
    if type(first) is not tuple or any(type(r) is not tuple or len(r) != len(first) for r in chunk):
        return _ROWS, chunk
    columns = []
    for i, value in enumerate(first):
        if isinstance(value, np.ndarray):
            if any(not isinstance(r[i], np.ndarray) or r[i].shape != value.shape or r[i].dtype != value.dtype
                   for r in chunk):
                return _ROWS, chunk
            columns.append(np.stack([r[i] for r in chunk]))
        elif type(value) in (int, float, bool) and all(type(r[i]) is type(value) for r in chunk):
            columns.append([r[i] for r in chunk])
        else:
            return _ROWS, chunk
    return _COLUMNS, columns


def unpack_columns(columns: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of :func:`pack_columns`' columns (array values are views into them)."""
    return list(zip(*columns))


def _chunks(rows: Iterable[Any]) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == CHUNK_ROWS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _replay(spill: Any) -> Iterator[list[Any]]:
    spill.flush()
    spill.seek(0)
    while True:
        try:
            # The spill file is this task's own, written moments ago by the first epoch
            # (private, unlinked temporary file), never bytes from the network.
            yield pickle.load(spill)
        except EOFError:
            return
