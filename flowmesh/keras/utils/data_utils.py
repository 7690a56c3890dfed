"""``tf.keras.utils.Sequence`` and the enqueuers that read batches ahead in threads
(``OrderedEnqueuer`` for a Sequence, ``GeneratorEnqueuer`` for a generator). ``fit``,
``evaluate`` and ``predict`` take a Sequence or a generator directly (batch by batch;
``Sequence.on_epoch_end`` is called after each epoch). Worker processes
(``use_multiprocessing=True``) are not used: threads read ahead instead."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np


class Sequence:
    """Base class of a dataset of batches: ``__getitem__(index)`` gives batch ``index``
    (``x``, ``(x, y)`` or ``(x, y, sample_weight)``), ``__len__`` the number of batches."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10):
        self.workers, self.use_multiprocessing, self.max_queue_size = workers, use_multiprocessing, max_queue_size

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def on_epoch_end(self) -> None:
        """Called after every epoch (e.g. to shuffle)."""

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self[index]


class SequenceEnqueuer:
    """Base class: ``start(workers, max_queue_size)``, ``get()`` (a generator of batches),
    ``stop()``, ``is_running()``."""

    def __init__(self, sequence: Any, use_multiprocessing: bool = False):
        self.sequence, self.use_multiprocessing = sequence, use_multiprocessing
        self._queue: queue.Queue | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def is_running(self) -> bool:
        return bool(self._threads) and not self._stop.is_set()

    def start(self, workers: int = 1, max_queue_size: int = 10) -> None:
        self._queue = queue.Queue(max(1, max_queue_size))
        self._stop.clear()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        while self._queue is not None and not self._queue.empty():
            self._queue.get_nowait()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        raise NotImplementedError

    def get(self) -> Iterator[Any]:
        raise NotImplementedError


class OrderedEnqueuer(SequenceEnqueuer):
    """Reads a ``Sequence``'s batches ahead in threads and yields them in order, epoch after
    epoch (``shuffle`` permutes the batch order each epoch)."""

    def __init__(self, sequence: Sequence, use_multiprocessing: bool = False, shuffle: bool = False):
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle
        self._lock = threading.Lock()
        self._epoch_orders: dict[int, list[int]] = {}

    def start(self, workers: int = 1, max_queue_size: int = 10) -> None:
        super().start(1, max_queue_size)  # one reader keeps the order; workers only read ahead

    def _run(self) -> None:
        while not self._stop.is_set():
            order = list(range(len(self.sequence)))
            if self.shuffle:
                np.random.shuffle(order)
            for index in order:
                if not self._put(("batch", self.sequence[index])):
                    return
            self.sequence.on_epoch_end()
            if not self._put(("epoch_end", None)):
                return

    def get(self) -> Iterator[Any]:
        while self.is_running():
            try:
                kind, item = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "batch":
                yield item


class GeneratorEnqueuer(SequenceEnqueuer):
    """Reads a generator ahead in a thread (the generator is advanced by one thread only)."""

    def __init__(self, generator: Any, use_multiprocessing: bool = False, random_seed: int | None = None):
        super().__init__(generator, use_multiprocessing)
        self.random_seed = random_seed

    def start(self, workers: int = 1, max_queue_size: int = 10) -> None:
        super().start(1, max_queue_size)

    def _run(self) -> None:
        try:
            for item in self.sequence:
                if not self._put(("batch", item)):
                    return
        except Exception as err:  # noqa: BLE001 - handed to the reader
            self._put(("error", err))
            return
        self._put(("end", None))

    def get(self) -> Iterator[Any]:
        while self.is_running():
            try:
                kind, item = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "error":
                raise item
            if kind == "end":
                return
            yield item


class PythonBatches:
    """``fit``'s batch source for a ``Sequence`` or a generator (the ``next``/``restart``
    interface of its ``tf.data`` source)."""

    def __init__(self, source: Any):
        self.source = source
        self._position = 0
        self._iterator = None if isinstance(source, Sequence) else iter(source)

    def restart(self) -> None:
        if isinstance(self.source, Sequence):
            if self._position:
                self.source.on_epoch_end()
            self._position = 0

    def next(self) -> tuple[list[np.ndarray], list[np.ndarray] | None, np.ndarray | None] | None:
        if isinstance(self.source, Sequence):
            if self._position >= len(self.source):
                return None
            element = self.source[self._position]
            self._position += 1
        else:
            try:
                element = next(self._iterator)
            except StopIteration:
                return None
        return split_element(element)


def split_element(element: Any) -> tuple[Any, list[np.ndarray] | None, np.ndarray | None]:
    """``(xs, ys, sample_weight)`` of ``x``, ``(x, y)`` or ``(x, y, w)``."""
    if isinstance(element, tuple) and len(element) in (2, 3):
        x, y = element[0], element[1]
        weight = np.asarray(element[2]) if len(element) == 3 and element[2] is not None else None
    else:
        x, y, weight = element, None, None
    if isinstance(x, dict):
        xs: Any = x
    else:
        xs = [np.asarray(v) for v in (x if isinstance(x, (list, tuple)) else [x])]
    ys = None if y is None else [np.asarray(v) for v in (y if isinstance(y, (list, tuple)) else [y])]
    if ys is not None:  # a 1-D target is a column, as for arrays (tf-keras's standardize_single_array)
        ys = [v[:, None] if v.ndim == 1 else v for v in ys]
    return xs, ys, weight


def is_python_batches(x: Any) -> bool:
    """A ``Sequence`` or a generator/iterator of batches (not an array or a list)."""
    import types

    return isinstance(x, (Sequence, types.GeneratorType)) or (hasattr(x, "__next__") and not hasattr(x, "shape"))
