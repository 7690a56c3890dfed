"""Whether a ``prefetch`` runs its input ahead on its thread or in the consumer's thread,
chosen by timing the consumer.

A prefetch thread hides its input's time behind the consumer's only where that work can run
beside it: I/O, or kernels that release the interpreter lock on a core the consumer leaves
free. Input work that is Python holds the lock: every time the training step's thread wants
it back (after each kernel) it waits for the input thread to let go, and an OpenMP team whose
member the input thread displaced stalls at every parallel region; there, producing the
batch in the step's own thread runs the step at the speed of the same model fed from
memory (``benchmarks/RESULTS.md``, "Session 16").

So, like the thread tuner (``runtime/thread_tuner.py``), the consumer times both: a probe runs
blocks of consecutive elements (at least ``PROBE_ELEMENTS`` and ``BLOCK_S`` seconds each) with
the thread producing and with the consumer producing, ``BLOCKS`` blocks each, in turn, and
keeps the way with the shorter time between requests (a mean without the slowest period;
the first period of a block, the switch, is left out). Probes start after ``WARMUP`` elements and are
repeated (``FIRST_REPROBE_S``, then at most every ``REPROBE_S`` seconds), so a pipeline whose
cost changes, or a machine that gets busier, is followed. ``FLOWMESH_ADAPTIVE_PREFETCH=0``
keeps the thread always.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from flowmesh import config

WARMUP = 40            # elements before the first probe (start-up fills, the thread tuner)
PROBE_ELEMENTS = 8     # elements per block (at least) ...
BLOCK_S = 0.08         # ... lasting at least this long ...
BLOCKS = 2             # ... this many per mode: thread, consumer, thread, consumer
MARGIN = 1.0           # the faster mode is kept (equal: the thread)
FIRST_REPROBE_S = 3.0
REPROBE_S = 20.0
REPROBE_FACTOR = 20    # ... and at least this many times the last probe's duration


class PrefetchChooser:
    """Times the periods between a consumer's requests; says who produces the next one.

    Args:
        clock: seconds (tests pass their own).
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self.inline = False          # the decision between probes
        self._seen = 0
        self._last: float | None = None
        self._next_probe = 0.0
        self._probe_started: float | None = None
        self._blocks: list[bool] = []  # the probe's blocks so far (True: inline)
        self._block_started = 0.0
        self._block_count = 0
        self._periods: dict[bool, list[float]] = {False: [], True: []}
        self._decisions = 0

    def next_inline(self, last_counts: bool = True) -> bool:
        """Called on every request: whether the consumer produces this element.
        ``last_counts=False``: the previous request does not show its mode's cost (the
        consumer was to produce it but took an element the thread had buffered)."""
        now = self._clock()
        period, self._last = (None if self._last is None or not last_counts else now - self._last), now
        self._seen += 1
        if self._probe_started is None:
            if self._seen <= WARMUP or now < self._next_probe:
                return self.inline
            self._probe_started = now
            self._start_block(now)
            return self._blocks[-1]
        if period is not None and self._block_count > 0:  # not a block's first: the switch
            self._periods[self._blocks[-1]].append(period)
        self._block_count += 1
        if self._block_count > PROBE_ELEMENTS and now - self._block_started >= BLOCK_S:
            if len(self._blocks) == 2 * BLOCKS:
                self._decide(now)
                return self.inline
            self._start_block(now)
        return self._blocks[-1]

    def _start_block(self, now: float) -> None:
        self._blocks.append(len(self._blocks) % 2 == 1)  # thread first, then consumer
        self._block_started, self._block_count = now, 0

    def _decide(self, now: float) -> None:
        means = {mode: _trimmed_mean(p) for mode, p in self._periods.items()}
        self.inline = means[True] < MARGIN * means[False]
        config.debug(1, f"prefetch: thread {means[False] * 1e3:.3f} ms, consumer "
                        f"{means[True] * 1e3:.3f} ms per element -> "
                        f"{'consumer' if self.inline else 'thread'}")
        took = now - (self._probe_started or now)
        wait = FIRST_REPROBE_S if self._decisions == 0 else REPROBE_S
        self._next_probe = now + max(wait, REPROBE_FACTOR * took)
        self._decisions += 1
        self._probe_started = None
        self._blocks = []
        self._periods = {False: [], True: []}


def _trimmed_mean(periods: list[float]) -> float:
    if not periods:
        return float("inf")
    return statistics.fmean(sorted(periods)[:-1]) if len(periods) > 2 else statistics.fmean(periods)
