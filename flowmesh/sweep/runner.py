"""The sweep loop: keep ``parallel`` trials running, act on their reports, record each.

Trials are proposed in the sampler's order; one already in ``results.csv`` (same
parameters) is skipped, so a rerun after a crash continues where the sweep stopped.
Each finished trial gets a row (``done``, ``stopped`` early, or ``failed`` with its last
output lines in its log) and is told to the sampler.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from flowmesh.config import process_environment
from flowmesh.sweep import results
from flowmesh.sweep.engines import Engine
from flowmesh.sweep.results import Row
from flowmesh.sweep.stopping import Stopper
from flowmesh.sweep.trial import Outcome, command


@dataclass
class SweepConfig:
    script: list[str]
    metric: str
    mode: str
    trials: int
    parallel: int
    out: str
    engine: str = "local"
    early_stop: str | None = None
    grace: int = 1
    env: dict[str, str] = field(default_factory=dict)


class Sweep:
    """Runs one sweep; ``run()`` returns the rows of every trial (earlier runs' included)."""

    def __init__(self, config: SweepConfig, sampler: Any, out: TextIO | None = None):
        if config.mode not in ("max", "min"):
            raise ValueError(f"--mode {config.mode!r}: max or min")
        self.config, self.sampler, self.out = config, sampler, out or sys.stdout
        os.makedirs(config.out, exist_ok=True)
        self.csv = os.path.join(config.out, "results.csv")
        self.rows = results.load(self.csv, config.metric)
        self._events: queue.Queue = queue.Queue()
        self._running: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._stopper = Stopper(config.early_stop, config.mode, config.grace) if config.early_stop else None

    def run(self) -> list[Row]:
        engine = Engine(self.config.engine, self.config.parallel)
        if self._stopper and not engine.streams_reports:
            self.say(f"early stopping needs the local engine; trials on {engine.name} run to the end")
        done = {results.key(r.params): r for r in self.rows}
        for row in self.rows:
            self.sampler.tell(row.params, row.value)
        if self.rows:
            self.say(f"resuming: {len(self.rows)} trial(s) already in {self.csv}")
        self._header()
        started = time.perf_counter()
        index = 0
        try:
            while index < self.config.trials or self._running:
                while index < self.config.trials and len(self._running) < self.config.parallel:
                    params = self.sampler.propose(index)
                    if params is None:
                        self.config.trials = index  # the grid is exhausted
                        break
                    if results.key(params) not in done:
                        self._start(engine, index, params)
                    index += 1
                if self._running:
                    self._handle(self._events.get())
        finally:
            for trial, _ in self._running.values():
                trial.stop()
            engine.close()
        self.say(f"{len(self.rows)} trial(s) in {time.perf_counter() - started:.1f} s")
        self._finish()
        return self.rows

    def say(self, message: str) -> None:
        print(f"[sweep] {message}", file=self.out, flush=True)

    def _start(self, engine: Engine, index: int, params: dict[str, Any]) -> None:
        env = {**process_environment(), "PYTHONUNBUFFERED": "1", **self.config.env}
        env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // self.config.parallel)))
        log = os.path.join(self.config.out, f"trial-{index}.log")
        trial = engine.start(index, command(self.config.script, params), env, self.config.metric,
                             self._events, log)
        self._running[index] = (trial, params)

    def _handle(self, event: tuple[str, int, Any]) -> None:
        kind, index, payload = event
        trial, params = self._running[index]
        if kind == "report":
            if self._stopper and not trial.stopped and self._stopper.should_stop(index, payload):
                trial.stop()
            return
        del self._running[index]
        self._record(index, params, payload, trial.stopped)

    def _record(self, index: int, params: dict[str, Any], outcome: Outcome, stopped: bool) -> None:
        value = outcome.reports[-1] if outcome.reports else None
        status = "stopped" if stopped else "done" if outcome.code == 0 and value is not None else "failed"
        row = Row(index, status, value, outcome.seconds, params)
        results.append(self.csv, self.config.metric, row)
        self.rows.append(row)
        self.sampler.tell(params, value if status != "failed" else None)
        shown = "-" if value is None else f"{value:.6g}"
        print(f"{index:>5}  {status:<8} {shown:>12} {outcome.seconds:>8.1f}s  {params}", file=self.out, flush=True)
        if status == "failed":
            reason = outcome.tail.strip().splitlines()[-1:] or [f"exit code {outcome.code}, no {self.config.metric} line"]
            self.say(f"trial {index} failed: {reason[0]}")

    def _header(self) -> None:
        print(f"{'trial':>5}  {'status':<8} {self.config.metric:>12} {'time':>9}  params", file=self.out, flush=True)

    def _finish(self) -> None:
        winner = results.best(self.rows, self.config.mode)
        png = os.path.join(self.config.out, "sweep.png")
        if results.plot(png, self.rows, self.config.metric, self.config.mode):
            self.say(f"wrote {self.csv} and {png}")
        else:
            self.say(f"wrote {self.csv} (no sweep.png: pip install matplotlib)")
        if winner is None:
            print(f"best: none (no trial reported {self.config.metric})", file=self.out, flush=True)
        else:
            print(f"best {winner.params}: {self.config.metric} {winner.value:.6g} (trial {winner.trial})",
                  file=self.out, flush=True)
