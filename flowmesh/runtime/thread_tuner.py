"""Intra-op threads chosen by timing steps: the whole OpenMP team, or one thread.

An OpenMP team waits for its slowest member at the end of every parallel region. On an
idle machine the team is fastest; when another process takes one of the cores, the member
it displaces stalls the rest at every region, and a step can run slower on two threads
than on one (the MLP step with one CPU hog on two cores: 630 steps/s on two threads, 900
on one). TensorFlow's work-stealing pools degrade gracefully there; flowmesh gets the same
effect by measuring: each plan times a few steps on each candidate now and then and keeps
the faster one, so an idle machine keeps the team and a busy one drops to one thread.

Only sessions that leave ``intra_op_parallelism_threads`` at 0 are tuned, and
``FLOWMESH_ADAPTIVE_THREADS=0`` turns the tuning off.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

WARMUP_STEPS = 2     # a plan's first steps build kernels and caches: not timed
PROBE_STEPS = 5      # steps timed per candidate in one probe
MARGIN = 0.9         # one thread must be at least 10% faster to replace the team
REPROBE_S = 10.0     # least time between probes ...
REPROBE_FACTOR = 20  # ... and at least this many times the last probe's duration


class ThreadTuner:
    """Chooses the intra-op thread count of one plan's steps.

    Args:
        team: the full team size (the process's default intra-op thread count).
        clock: seconds, for the time between probes (tests pass their own).
    """

    def __init__(self, team: int, clock: Callable[[], float] = time.monotonic):
        self.team = team
        self.choice = team
        self._clock = clock
        self._warmup = WARMUP_STEPS
        self._samples: dict[int, list[float]] = {team: [], 1: []}
        self._probe_started: float | None = None
        self._next_probe = 0.0

    def threads(self) -> int:
        """The thread count for the next step."""
        if self.team <= 1 or self._warmup > 0 or self._clock() < self._next_probe:
            return self.choice
        if self._probe_started is None:
            self._probe_started = self._clock()
        team_n, one_n = len(self._samples[self.team]), len(self._samples[1])
        return 1 if one_n < team_n else self.team  # alternate, the team first

    def record(self, threads: int, seconds: float) -> None:
        """Notes that a step on ``threads`` threads took ``seconds``."""
        if self._warmup > 0:
            self._warmup -= 1
            return
        if self._probe_started is None or threads not in self._samples:
            return
        self._samples[threads].append(seconds)
        if min(len(s) for s in self._samples.values()) >= PROBE_STEPS:
            self._decide()

    def _decide(self) -> None:
        team_s = statistics.median(self._samples[self.team])
        one_s = statistics.median(self._samples[1])
        self.choice = 1 if one_s < MARGIN * team_s else self.team
        now = self._clock()
        probe_took = now - (self._probe_started or now)
        self._next_probe = now + max(REPROBE_S, REPROBE_FACTOR * probe_took)
        self._probe_started = None
        self._samples = {self.team: [], 1: []}
