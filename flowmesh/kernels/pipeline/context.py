"""What the stages of one running pipeline share: cancellation, threads, per-iterator state.

One :class:`PipelineContext` exists per initialisation of an iterator. Stages that run
ahead start their threads with :meth:`PipelineContext.start_thread` and wait with
:meth:`PipelineContext.wait`, which returns early once the pipeline is cancelled, so
:meth:`PipelineContext.cancel` stops every thread promptly and joins it: no thread
outlives its iterator (re-initialisation, an error, session close, garbage collection).
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

_WAIT_S = 0.1
_JOIN_S = 5.0
_LIVE: weakref.WeakSet[PipelineContext] = weakref.WeakSet()


class PipelineStep:
    """The step object compiled functions (``map`` bodies...) run with in pipeline threads.

    A pipeline outlives the ``Session.run`` step that created it, so its functions get a
    step of their own: no rendezvous (a function runs on one device), no deadline, no trace.
    """

    __slots__ = ("step_id", "rendezvous", "timeout", "trace", "trace_lanes")
    _ids = itertools.count(1 << 40)

    def __init__(self) -> None:
        self.step_id = next(self._ids)
        self.rendezvous = None
        self.timeout = None
        self.trace = None
        self.trace_lanes: dict[str, Any] = {}


class PipelineCancelled(Exception):  # noqa: N818 - internal signal, not an error
    """Raised inside pipeline threads once the pipeline is cancelled (never seen by users)."""


class PipelineContext:
    """Cancellation, threads and per-stage state of one running pipeline.

    Args:
        deterministic: the default order policy of parallel stages whose own setting is
            ``None`` (``options().experimental_deterministic``).
        name: the iterator's name, used in thread names and errors.
    """

    def __init__(self, deterministic: bool = True, name: str = "iterator"):
        self.deterministic = deterministic
        self.name = name
        self.cancelled = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conds: list[threading.Condition] = []
        self._lock = threading.Lock()
        self._state: dict[Any, Any] = {}
        self._on_cancel: list[Callable[[], None]] = []
        self.stats: dict[str, int] = {}
        # the iterator's outermost stage and its with_options worker-process setting: the one
        # prefetch that may run its input in a worker process (kernels/pipeline/worker_process.py)
        self.worker_root: Any = None
        self.worker_setting: bool | None = None
        _LIVE.add(self)

    # --- per-stage state that lives as long as the iterator ------------------------------
    def state(self, key: Any, create: Callable[[], Any]) -> Any:
        """The state object of ``key`` (a stage definition), created on first use."""
        with self._lock:
            found = self._state.get(key)
            if found is None:
                found = self._state[key] = create()
            return found

    def record_max(self, stat: str, value: int) -> None:
        """Keeps the largest ``value`` seen under ``stat`` (tests read buffer peaks)."""
        if value > self.stats.get(stat, 0):
            self.stats[stat] = value

    # --- threads -------------------------------------------------------------------------
    def condition(self) -> threading.Condition:
        """A condition variable that :meth:`cancel` notifies."""
        cond = threading.Condition()
        with self._lock:
            self._conds.append(cond)
        return cond

    def start_thread(self, target: Callable[[], None], what: str) -> threading.Thread:
        """Starts a daemon thread running ``target`` (it must return once cancelled)."""
        if self.cancelled.is_set():
            raise PipelineCancelled()
        thread = threading.Thread(target=target, name=f"flowmesh-data:{self.name}:{what}",
                                  daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` (once) when the pipeline is cancelled, or now if it already is."""
        with self._lock:
            if not self.cancelled.is_set():
                self._on_cancel.append(callback)
                return
        callback()

    def wait(self, cond: threading.Condition, ready: Callable[[], bool]) -> None:
        """Waits (holding ``cond``) until ``ready()``; raises :class:`PipelineCancelled` once the
        pipeline is cancelled."""
        while not ready():
            if self.cancelled.is_set():
                raise PipelineCancelled()
            cond.wait(_WAIT_S)
        if self.cancelled.is_set():
            raise PipelineCancelled()

    def check(self) -> None:
        """Raises :class:`PipelineCancelled` once the pipeline is cancelled."""
        if self.cancelled.is_set():
            raise PipelineCancelled()

    def cancel(self) -> None:
        """Stops every stage thread and joins it (idempotent)."""
        with self._lock:
            self.cancelled.set()
            conds, threads = list(self._conds), list(self._threads)
            callbacks, self._on_cancel = self._on_cancel, []
        for callback in callbacks:
            callback()
        for cond in conds:
            with cond:
                cond.notify_all()
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join(_JOIN_S)

    def live_threads(self) -> list[threading.Thread]:
        """The stage threads still running."""
        with self._lock:
            return [t for t in self._threads if t.is_alive()]


def default_parallelism() -> int:
    """``AUTOTUNE``'s parallelism: the number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def cancel_all() -> None:
    """Cancels every live pipeline and joins its threads: registered with ``atexit``, so a
    program that never closes its session exits without pipeline threads still running
    (a daemon thread inside torch during interpreter finalization aborts the process)."""
    for ctx in list(_LIVE):
        ctx.cancel()


atexit.register(cancel_all)
