"""Big kernels split into chunks that whichever thread is running computes (dynamic mode).

An OpenMP team splits a kernel statically: each member owns its share, and the region
ends when the slowest member ends. When another process takes a core, the member it
displaces stalls the step at every region (benchmarks/RESULTS.md, "The thread tuner").
TensorFlow's pools degrade gracefully there because their work is taken, not assigned.

A :class:`ChunkPool` does the same for flowmesh's big CPU kernels. The calling thread and
the pool's helper threads (one intra-op thread each; torch releases the GIL inside
kernels) claim chunks from one counter, so a thread the OS does not run takes no work.
No thread ever waits for another: when the caller has no chunk left to claim, it
computes again any chunk a helper claimed but has not finished (a helper that was
descheduled mid-chunk), and whichever copy finishes first is kept. Helpers compute into
their own tensors, so a late helper never writes into memory the step still uses; the
result is the concatenation of the chunks, the same values whoever computed each one.

Kernels call :func:`active` to learn whether the calling thread's step runs in this
mode (the session sets it per step: ``runtime/thread_tuner.py`` chooses between the
OpenMP team, one thread and this mode by timing steps).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

_current = threading.local()


def active() -> ChunkPool | None:
    """The pool of the calling thread's current step, or None (no dynamic mode)."""
    return getattr(_current, "pool", None)


def set_active(pool: ChunkPool | None) -> None:
    """Makes ``pool`` the calling thread's dynamic-mode pool (None: off)."""
    _current.pool = pool


class _Job:
    """One kernel's chunks: claimed from one counter, each result kept once."""

    __slots__ = ("count", "compute", "results", "done", "errors", "lock", "_claims")

    def __init__(self, count: int, compute: Callable[[int], Any]):
        self.count = count
        self.compute = compute
        self.results: list[Any] = [None] * count
        self.done = [False] * count
        self.errors: dict[int, BaseException] = {}
        self.lock = threading.Lock()
        self._claims = itertools.count()

    def claim(self) -> int | None:
        """The next unclaimed chunk (``next`` on a count is atomic under the GIL)."""
        index = next(self._claims)
        return index if index < self.count else None

    def keep(self, index: int, result: Any) -> None:
        """Keeps ``result`` unless another thread's copy of the chunk came first."""
        with self.lock:
            if not self.done[index]:
                self.results[index] = result
                self.done[index] = True

    def help(self) -> None:
        """A helper's share: claims and computes chunks until none is left."""
        while (index := self.claim()) is not None:
            try:
                result = self.compute(index)
            except BaseException as exc:  # noqa: BLE001 - the caller re-raises it
                self.errors[index] = exc
                return
            self.keep(index, result)


class ChunkPool:
    """Helper threads that share the chunks of big kernels with the calling thread.

    Args:
        helpers: helper threads besides the caller (started on first use).
        on_start: run once in each helper thread before its first chunk (sets its
            intra-op threads; tests pass their own).
    """

    def __init__(self, helpers: int, on_start: Callable[[], None] | None = None):
        if helpers < 1:
            raise ValueError(f"a ChunkPool needs at least one helper thread, got {helpers}")
        self.helpers = helpers
        self._on_start = on_start
        self._cv = threading.Condition()
        self._job: _Job | None = None
        self._serial = 0  # bumped for every job, so a helper never runs one twice
        self._closed = False
        self._threads: list[threading.Thread] = []

    def run(self, count: int, compute: Callable[[int], Any]) -> list[Any]:
        """Computes ``compute(i)`` for ``i < count`` on the caller and the helpers.

        Returns:
            The results in chunk order.

        Raises:
            Whatever ``compute`` raised (in the caller, or in a helper for a chunk the
            caller did not compute again).
        """
        if count <= 1 or self._closed:
            return [compute(i) for i in range(count)]
        job = _Job(count, compute)
        self._offer(job)
        try:
            while (index := job.claim()) is not None:
                job.results[index] = compute(index)
                job.done[index] = True
            for index in range(count):  # chunks helpers claimed: finished, or redone here
                if not job.done[index]:
                    error = job.errors.get(index)
                    if error is not None:
                        raise error
                    job.keep(index, compute(index))
        finally:
            self._withdraw(job)
        return job.results

    def _offer(self, job: _Job) -> None:
        with self._cv:
            if not self._threads:
                self._start()
            self._job = job
            self._serial += 1
            self._cv.notify_all()

    def _withdraw(self, job: _Job) -> None:
        with self._cv:
            if self._job is job:
                self._job = None

    def _start(self) -> None:
        for i in range(self.helpers):
            thread = threading.Thread(target=self._loop, name=f"flowmesh-chunks-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _loop(self) -> None:
        if self._on_start is not None:
            self._on_start()
        seen = 0
        while True:
            with self._cv:
                while not self._closed and (self._job is None or self._serial == seen):
                    self._cv.wait()
                if self._closed:
                    return
                job, seen = self._job, self._serial
            job.help()

    def close(self) -> None:
        """Stops and joins the helper threads (idempotent); later runs use the caller only."""
        with self._cv:
            self._closed = True
            self._job = None
            self._cv.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    @property
    def threads(self) -> Sequence[threading.Thread]:
        """The helper threads started so far."""
        return tuple(self._threads)
