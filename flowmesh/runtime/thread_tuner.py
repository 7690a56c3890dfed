"""How a plan's steps use the cores, chosen by timing steps: the OpenMP team, one
thread, or chunks taken by whichever thread runs (dynamic mode).

An OpenMP team waits for its slowest member at the end of every parallel region. On an
idle machine the team is fastest; when another process takes one of the cores, the member
it displaces stalls the rest at every region, and a step can run slower on two threads
than on one. TensorFlow's work-stealing pools degrade gracefully there; flowmesh gets the same
effect by measuring: each plan times a few steps in each candidate mode now and then and
keeps the fastest, so an idle machine keeps the team and a busy one leaves it.

The candidates (:class:`Mode`): the full team; one intra-op thread; and, when the session
has a chunk pool (``FLOWMESH_CHUNK_HELPERS`` > 0), one intra-op thread whose big kernels
are split into chunks that the caller and the pool's helper threads take from one counter
(``kernels/cpu/chunk_pool.py``): a descheduled helper holds up nothing. A probe runs each
candidate in blocks of consecutive steps (at least ``PROBE_STEPS`` steps and ``BLOCK_S``
seconds, ``BLOCKS`` blocks per candidate, in turn): steps interleaved one by one let other
work on the machine catch up during the one-thread steps and flatter the team. Modes are compared by
the mean time of their probe steps without the slowest one (throughput: a team's stalls
show in the mean, not in the median, while one step that another process happened to
preempt does not decide); a mode other than the team must be 10% faster to replace it.
A candidate that is clearly losing leaves the probe early: once its block has
``LOSING_STEPS`` steps and even its fastest is ``LOSING`` times the team's mean, its other
blocks are skipped (a compute-bound plan on an idle machine then spends two steps, not
``BLOCKS * PROBE_STEPS``, on one thread at each probe).

On a heavily oversubscribed machine (1-minute load average at least
``FLOWMESH_TUNER_MAX_LOAD`` per CPU) the team is kept without probing: there short probes
favour one thread, which then gets a smaller share of the cores than the team (the
scheduler shares the cores per thread). The measurements behind each rule are in
``benchmarks/RESULTS.md`` (issue 13: "The thread tuner", "sched13").

Only sessions (and servers, for a task's steps) that leave ``intra_op_parallelism_threads``
at 0 are tuned (``runtime/cpu_policy.py``), and
``FLOWMESH_ADAPTIVE_THREADS=0`` turns the tuning off.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

from flowmesh import config

WARMUP_STEPS = 2     # a plan's first steps build kernels and caches: not timed
PROBE_STEPS = 6      # steps timed per candidate in one probe (at least) ...
BLOCK_S = 0.04       # ... run in blocks of consecutive steps lasting at least this long ...
BLOCKS = 2           # ... this many per candidate, alternating (team, one, team, one)
MARGIN = 0.9         # another mode must be at least 10% faster to replace the team
LOSING_STEPS = 2     # a candidate's block of this many steps ...
LOSING = 1.3         # ... whose fastest takes this times the team's mean leaves the probe
FIRST_REPROBE_S = 2.0  # the first decision is checked again soon (start-up noise) ...
REPROBE_S = 10.0     # ... later ones at most this often ...
REPROBE_FACTOR = 20  # ... and at least this many times the last probe's duration


class Mode(NamedTuple):
    """How one step runs: ``threads`` intra-op threads, chunked kernels or not."""

    threads: int
    chunked: bool = False


class ThreadTuner:
    """Chooses the mode of one plan's steps.

    Args:
        team: the full team size (the process's default intra-op thread count).
        chunked: whether the dynamic mode is a candidate (the session has a chunk pool).
        clock: seconds, for the time between probes (tests pass their own).
        load: the machine's load per CPU (tests pass their own; default: never busy).
        max_load: from this load per CPU on, keep the team without probing (0: never).
    """

    def __init__(self, team: int, chunked: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 load: Callable[[], float] | None = None, max_load: float = 0.0):
        self.team = Mode(team)
        self.choice = self.team
        candidates = [self.team]
        if team > 1:
            candidates.append(Mode(1))
            if chunked:
                candidates.append(Mode(1, True))
        self.candidates = tuple(candidates)
        self._clock = clock
        self._load = load
        self._max_load = max_load
        self._warmup = WARMUP_STEPS
        self._samples: dict[Mode, list[float]] = {m: [] for m in self.candidates}
        self._blocks: list[Mode] = []  # the probe's blocks so far, the last one running
        self._queue: list[Mode] = []   # the probe's blocks still to run
        self._losing: set[Mode] = set()  # candidates that left this probe early
        self._block_samples: list[float] = []
        self._block_started = 0.0
        self._block_steps = 0
        self._probe_started: float | None = None
        self._next_probe = 0.0
        self._decisions = 0

    def mode(self) -> Mode:
        """The mode for the next step."""
        if len(self.candidates) == 1 or self._warmup > 0 or self._clock() < self._next_probe:
            return self.choice
        if self._probe_started is None:
            if self._overloaded():
                return self.choice
            self._probe_started = self._clock()
            # candidates in turn (the team first), BLOCKS blocks each
            self._queue = [m for _ in range(BLOCKS) for m in self.candidates]
        now = self._clock()
        if not self._blocks or (self._block_ended(now) and self._queue):
            # the next block: consecutive steps in one mode, long enough that what else
            # runs on the machine (a hog, an input worker refilling its buffer) shares the
            # cores as it will after the decision
            self._blocks.append(self._queue.pop(0))
            self._block_started, self._block_steps, self._block_samples = now, 0, []
        return self._blocks[-1]

    def _block_ended(self, now: float) -> bool:
        return self._blocks[-1] in self._losing or (
            self._block_steps >= PROBE_STEPS and now - self._block_started >= BLOCK_S)

    def _overloaded(self) -> bool:
        """On a heavily oversubscribed machine: keeps the team, checks again soon."""
        if self._max_load <= 0 or self._load is None:
            return False
        load = self._load()
        if load < self._max_load:
            return False
        if self.choice != self.team:
            config.debug(1, f"thread tuner: load {load:.1f} per CPU -> the team")
        self.choice = self.team
        self._next_probe = self._clock() + FIRST_REPROBE_S
        return True

    def threads(self) -> int:
        """The intra-op thread count for the next step (see :meth:`mode`)."""
        return self.mode().threads

    def record(self, mode: Mode | int, seconds: float) -> None:
        """Notes that a step in ``mode`` (or on that many threads) took ``seconds``."""
        if self._warmup > 0:
            self._warmup -= 1
            return
        if isinstance(mode, int):
            mode = Mode(mode)
        if self._probe_started is None or mode not in self._samples:
            return
        self._samples[mode].append(seconds)
        self._block_steps += 1
        if self._blocks and mode == self._blocks[-1]:
            self._block_samples.append(seconds)
            if self._is_losing(mode):
                self._losing.add(mode)
                self._queue = [m for m in self._queue if m not in self._losing]
        if all(m == self.team for m in self._queue) and self._losing.issuperset(
                set(self.candidates) - {self.team}):
            self._decide()  # every other candidate lost: what remains would only time the team
        elif not self._queue and self._blocks and self._block_ended(self._clock()):
            self._decide()

    def _is_losing(self, mode: Mode) -> bool:
        """Whether ``mode``'s running block shows it far slower than the team already."""
        team = self._samples[self.team]
        return (mode != self.team and len(self._block_samples) >= LOSING_STEPS
                and len(team) >= PROBE_STEPS and min(self._block_samples) > LOSING * _trimmed_mean(team))

    def _decide(self) -> None:
        # a mode can end a probe without samples when steps overlap (threads running the
        # same plan, a step blocked in a queue): it is not compared, and without the team's
        # own figure the team stays
        means = {m: _trimmed_mean(s) for m, s in self._samples.items() if s and m not in self._losing}
        best = min(means, key=means.__getitem__) if self.team in means else self.team
        self.choice = best if best != self.team and means[best] < MARGIN * means[self.team] else self.team
        timed = [f"{_name(m)} {s * 1e3:.2f} ms" for m, s in means.items()]
        losing = [f"{_name(m)} far slower" for m in self._losing]
        config.debug(1, f"thread tuner: {', '.join(timed + losing)} -> {_name(self.choice)}")
        now = self._clock()
        probe_took = now - (self._probe_started or now)
        wait = FIRST_REPROBE_S if self._decisions == 0 else REPROBE_S
        self._next_probe = now + max(wait, REPROBE_FACTOR * probe_took)
        self._decisions += 1
        self._probe_started = None
        self._samples = {m: [] for m in self.candidates}
        self._blocks, self._queue, self._losing, self._block_samples = [], [], set(), []


def _name(mode: Mode) -> str:
    return f"{mode.threads}{'+chunks' if mode.chunked else ''}"


def _trimmed_mean(samples: list[float]) -> float:
    """The mean step time without the slowest step."""
    return statistics.fmean(sorted(samples)[:-1]) if len(samples) > 2 else statistics.fmean(samples)
