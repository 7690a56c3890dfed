"""Stages that run on threads of their own: prefetch, parallel map, interleave.

* :class:`RunAhead` runs a generator in a thread, up to ``capacity`` elements ahead of its
  consumer (``prefetch``; each open element of a parallel ``interleave``).
* :class:`ParallelMapDataset` keeps up to ``num_parallel_calls`` calls of the map function
  in flight on worker threads; deterministic order returns results in input order, else
  in completion order.

Every thread is started through the :class:`PipelineContext` and waits with
``ctx.wait``, so cancelling the pipeline stops it; an error in a thread is handed to the
consumer, which raises it from ``IteratorGetNext``.
"""

from __future__ import annotations

import collections
import queue
from collections.abc import Callable, Iterator

from flowmesh import config
from flowmesh.kernels.pipeline import worker_process
from flowmesh.kernels.pipeline.base import DatasetDef, Element, ElementDropped, Function
from flowmesh.kernels.pipeline.context import (
    PipelineCancelled,
    PipelineContext,
    PipelineStep,
    default_parallelism,
)
from flowmesh.kernels.pipeline.prefetch_mode import PrefetchChooser
from flowmesh.kernels.pipeline.transforms import as_dataset

AUTOTUNE = -1
_AUTOTUNE_BUFFER = 16


def resolve_parallelism(value: int) -> int:
    """``AUTOTUNE`` (-1) -> the CPUs available; other values as given (at least 1)."""
    return default_parallelism() if value == AUTOTUNE else max(1, int(value))


class RunAhead:
    """Runs ``make_source()`` in a thread, buffering up to ``capacity`` elements.

    With a ``chooser`` (:class:`~flowmesh.kernels.pipeline.prefetch_mode.PrefetchChooser`)
    the consumer may produce elements itself instead: the thread is then parked between two
    elements, and the consumer takes what it had buffered before pulling from the source.
    """

    def __init__(self, ctx: PipelineContext, make_source: Callable[[], Iterator[Element]],
                 capacity: int, what: str, chooser: PrefetchChooser | None = None):
        self.ctx = ctx
        self.capacity = max(1, capacity)
        self.cond = ctx.condition()
        self.items: collections.deque[Element] = collections.deque()
        self.done = False
        self.stopped = False
        self.error: BaseException | None = None
        self._make_source = make_source
        self._source: Iterator[Element] | None = None
        self._chooser = chooser
        self._parked = False   # the consumer produces: the thread waits between elements
        self._producing = False  # the thread is inside the source
        self._consumer_producing = False  # the consumer is
        self._last_counts = True
        ctx.start_thread(self._run, what)

    def _run(self) -> None:
        try:
            with self.cond:
                self._source = self._make_source()
                self.cond.notify_all()
            while self._next_turn():
                try:
                    element = next(self._source)
                except StopIteration:
                    break
                with self.cond:
                    self._producing = False
                    self.items.append(element)
                    self.cond.notify_all()
        except PipelineCancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            self.error = exc
        finally:
            with self.cond:
                self._producing = False
                self.done = True
                self.cond.notify_all()
                in_use = self._consumer_producing  # then the generator closes when collected
            if self._source is not None and not in_use:
                self._source.close()

    def _next_turn(self) -> bool:
        """Waits for room (and for the consumer to stop producing); False once stopped."""
        with self.cond:
            self.ctx.wait(self.cond, lambda: self.stopped or (
                len(self.items) < self.capacity and not self._parked))
            if self.stopped:
                return False
            self._producing = True
            return True

    def get(self) -> Element | None:
        """The next element, or ``None`` at the end; re-raises the thread's error."""
        if self._chooser is not None and self._chooser.next_inline(self._last_counts):
            return self._get_inline()
        self._last_counts = True
        with self.cond:
            self._parked = False
            self.cond.notify_all()
            self.ctx.wait(self.cond, lambda: bool(self.items) or self.done)
            if self.items:
                element = self.items.popleft()
                self.cond.notify_all()
                return element
            if self.error is not None:
                raise self.error
            return None

    def _get_inline(self) -> Element | None:
        """The next element produced in the calling thread (after what the thread buffered)."""
        with self.cond:
            self._parked = True
            self.ctx.wait(self.cond, lambda: self.done or (
                self._source is not None and not self._producing))
            self._last_counts = not self.items
            if self.items:
                return self.items.popleft()
            if self.error is not None:
                raise self.error
            if self.done:
                return None
            self._consumer_producing = True
        try:
            return next(self._source)
        except StopIteration:
            self._finish()
            return None
        except BaseException:
            self._finish()
            raise
        finally:
            self._consumer_producing = False

    def _finish(self) -> None:
        with self.cond:
            self.done = self.stopped = True
            self.cond.notify_all()
        if self._source is not None:
            self._source.close()

    def stop(self) -> None:
        """Asks the thread to stop at its next element."""
        with self.cond:
            self.stopped = True
            self.cond.notify_all()

    def __iter__(self) -> Iterator[Element]:
        try:
            while True:
                element = self.get()
                if element is None:
                    return
                yield element
        finally:
            self.stop()


class PrefetchDataset(DatasetDef):
    """``prefetch(buffer_size)``: the input runs ahead on a thread of its own, or, as the
    outermost stage of an iterator, in a worker process where eligible and not switched off
    (``kernels/pipeline/worker_process.py``).

    Args:
        worker_eligible: the stages below may run in a forked process (decided when the
            graph was built: ``data/worker_eligibility.py``).
        worker_setting: ``options.experimental_worker_process`` when ``prefetch`` was built.
    """

    def __init__(self, name: str, source: DatasetDef, buffer_size: int,
                 worker_eligible: bool = False, worker_setting: bool | None = None):
        self.name = name
        self.source = source
        self.buffer_size = _AUTOTUNE_BUFFER if buffer_size == AUTOTUNE else buffer_size
        self.worker_eligible = worker_eligible
        self.worker_setting = worker_setting

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        if self.buffer_size == 0:
            return self.source.iterate(ctx)
        if ctx.worker_root is self:
            ctx.worker_root = None  # one worker per iterator initialisation
            setting = self.worker_setting if ctx.worker_setting is None else ctx.worker_setting
            if worker_process.wanted(self.worker_eligible, setting):
                try:
                    worker = worker_process.WorkerProcess(ctx, self.source, self.buffer_size,
                                                          f"prefetch:{self.name}")
                except OSError:  # no process to be had (fork refused): threads still work
                    pass
                else:
                    return _from_worker(ctx, worker, self.buffer_size, f"prefetch:{self.name}")
        chooser = PrefetchChooser() if config.ADAPTIVE_PREFETCH.get() else None
        return iter(RunAhead(ctx, lambda: self.source.iterate(ctx), self.buffer_size,
                             f"prefetch:{self.name}", chooser))


def _from_worker(ctx: PipelineContext, worker: worker_process.WorkerProcess, capacity: int,
                 what: str) -> Iterator[Element]:
    """A worker process's elements. Elements too big to wait in the socket's buffer would
    make the worker wait for each ``GetNext`` to take them: those are received ahead by a
    thread (``capacity`` of them, as a prefetch thread buffers)."""
    try:
        first = worker.get()
        if first is None:
            return
        yield first
        if worker.large_elements:
            yield from RunAhead(ctx, worker.elements, capacity, f"{what}:receive")
        else:
            yield from worker.elements()
    finally:
        worker.close()


class _Task:
    __slots__ = ("element", "result", "error", "done")

    def __init__(self, element: Element):
        self.element = element
        self.result: Element | None = None
        self.error: BaseException | None = None
        self.done = False


class _Workers:
    """``count`` threads running ``fn`` on submitted tasks."""

    def __init__(self, ctx: PipelineContext, fn: Function, count: int, what: str):
        self.ctx = ctx
        self.fn = fn
        self.tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self.cond = ctx.condition()
        self.count = count
        for i in range(count):
            ctx.start_thread(self._run, f"{what}:{i}")

    def _run(self) -> None:
        step = PipelineStep()
        while not self.ctx.cancelled.is_set():
            try:
                task = self.tasks.get(timeout=0.1)
            except queue.Empty:
                continue
            if task is None:
                return
            try:
                task.result = tuple(self.fn(step, task.element))
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                task.error = exc
            task.element = None
            with self.cond:
                task.done = True
                self.cond.notify_all()

    def submit(self, task: _Task) -> None:
        self.tasks.put(task)

    def stop(self) -> None:
        for _ in range(self.count):
            self.tasks.put(None)


class ParallelMapDataset(DatasetDef):
    """``map(num_parallel_calls=n)``: up to ``n`` calls in flight on ``n`` threads.

    Args:
        deterministic: ``True``/``False``, or ``None`` for the pipeline's default
            (``options().experimental_deterministic``).
    """

    def __init__(self, name: str, source: DatasetDef, fn: Function, parallelism: int,
                 deterministic: bool | None):
        self.name = name
        self.source = source
        self.fn = fn
        self.parallelism = parallelism
        self.deterministic = deterministic

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        count = resolve_parallelism(self.parallelism)
        ordered = ctx.deterministic if self.deterministic is None else self.deterministic
        workers = _Workers(ctx, self.fn, count, f"map:{self.name}")
        inflight: collections.deque[_Task] = collections.deque()
        source = self.source.iterate(ctx)
        exhausted = False
        try:
            while True:
                while not exhausted and len(inflight) < 2 * count:
                    element = next(source, None)
                    if element is None:
                        exhausted = True
                    else:
                        task = _Task(element)
                        inflight.append(task)
                        workers.submit(task)
                if not inflight:
                    return
                task = self._next_done(ctx, workers, inflight, ordered)
                if isinstance(task.error, ElementDropped):  # ignore_errors
                    continue
                if task.error is not None:
                    raise task.error
                yield task.result
        finally:
            workers.stop()
            source.close()

    @staticmethod
    def _next_done(ctx: PipelineContext, workers: _Workers, inflight: collections.deque,
                   ordered: bool) -> _Task:
        with workers.cond:
            if ordered:
                head = inflight[0]
                ctx.wait(workers.cond, lambda: head.done)
                return inflight.popleft()
            ctx.wait(workers.cond, lambda: any(t.done for t in inflight))
            task = next(t for t in inflight if t.done)
            inflight.remove(task)
            return task


class InterleaveDataset(DatasetDef):
    """``interleave(fn, cycle_length, block_length, num_parallel_calls)``.

    The order is TensorFlow's: ``cycle_length`` datasets (``fn`` of consecutive input
    elements) are open at a time; ``block_length`` elements are taken from each in turn;
    an exhausted one is replaced by the next input element's dataset at its turn. With
    ``num_parallel_calls`` each open dataset runs ahead on a thread of its own (same
    order).
    """

    def __init__(self, name: str, source: DatasetDef, fn: Function, cycle_length: int,
                 block_length: int, parallelism: int | None):
        self.name = name
        self.source = source
        self.fn = fn
        self.cycle_length = cycle_length
        self.block_length = max(1, block_length)
        self.parallelism = parallelism

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        cycle_length = resolve_parallelism(self.cycle_length)
        cycle: list[Iterator[Element] | None] = [None] * cycle_length
        source, step = self.source.iterate(ctx), PipelineStep()
        end_of_input, num_open, index, block = False, 0, 0, 0
        try:
            while not end_of_input or num_open > 0:
                current = cycle[index]
                if current is not None:
                    element = next(current, None)
                    if element is not None:
                        yield element
                        block += 1
                        if block == self.block_length:
                            index, block = (index + 1) % cycle_length, 0
                        continue
                    cycle[index] = None
                    num_open -= 1
                    index, block = (index + 1) % cycle_length, 0
                elif not end_of_input:
                    args = next(source, None)
                    if args is None:
                        end_of_input = True
                    else:
                        cycle[index] = self._open(ctx, step, args)
                        num_open += 1
                else:
                    index, block = (index + 1) % cycle_length, 0
        finally:
            for current in cycle:
                if current is not None:
                    current.close()
            source.close()

    def _open(self, ctx: PipelineContext, step: PipelineStep, args: Element) -> Iterator[Element]:
        (inner,) = self.fn(step, args)
        dataset = as_dataset(inner, f"InterleaveDataset '{self.name}'")
        if self.parallelism is None:
            return dataset.iterate(ctx)
        return iter(RunAhead(ctx, lambda: dataset.iterate(ctx), self.block_length,
                             f"interleave:{self.name}"))
