"""A bounded CPU hog for the benchmarks' contention mode (``--contend N``).

Real cluster nodes are shared: data loaders, ps tasks, other jobs, the several tasks
``flowmesh launch`` starts per host. ``--contend N`` measures a benchmark while ``N``
busy-looping processes compete for the cores, started and stopped by the benchmark itself
(BENCHMARKS.md item 9). Each hog is bounded twice: :class:`CpuHogs` kills it when the
measurement ends (also on errors), and the hog exits by itself after ``max_seconds`` even
if the benchmark process died without cleaning up.

Example::

    with CpuHogs(1):
        results = measure(contenders, settings)
"""

from __future__ import annotations

import subprocess
import sys
import time
from types import TracebackType

# A pure-Python busy loop: one core's worth of demand, no memory traffic, no syscalls.
_HOG = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


class CpuHogs:
    """``count`` CPU-bound child processes for the duration of a ``with`` block.

    Args:
        count: how many hogs (0: none, the block runs on an otherwise idle machine).
        max_seconds: a hog exits by itself after this long, whatever happens to its parent.
    """

    def __init__(self, count: int, max_seconds: float = 900.0):
        if count < 0:
            raise ValueError(f"--contend must be >= 0 CPU hogs, got {count}")
        self.count = count
        self.max_seconds = max_seconds
        self._procs: list[subprocess.Popen] = []

    def __enter__(self) -> CpuHogs:
        code = _HOG.format(seconds=float(self.max_seconds))
        for _ in range(self.count):
            self._procs.append(subprocess.Popen([sys.executable, "-c", code]))
        if self._procs:
            time.sleep(0.2)  # let the hogs reach their loop before the first timed round
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def running(self) -> int:
        """How many hogs are still running."""
        return sum(1 for p in self._procs if p.poll() is None)

    def stop(self) -> None:
        """Kills and reaps every hog (idempotent)."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            proc.wait()
        self._procs.clear()
