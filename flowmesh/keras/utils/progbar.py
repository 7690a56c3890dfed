"""Keras's progress bar: ``30/100 [=====>....] - ETA: 1s - loss: 0.1234`` (verbose=1),
or one line at the end (verbose=2, or when the output is not a terminal)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


def format_value(value: float) -> str:
    """Keras's number format: ``0.1234`` or ``1.2346e-05``."""
    return f" {value:.4f}" if abs(value) > 1e-3 else f" {value:.4e}"


class Progbar:
    """Displays progress towards ``target`` units (samples or steps), with running means of
    the values passed to :meth:`update` (weighted by the units each update covers)."""

    def __init__(self, target: int | None, width: int = 30, verbose: int = 1, interval: float = 0.05,
                 stateful_metrics: Any = None, unit_name: str = "step", stream: TextIO | None = None):
        self.target, self.width, self.verbose, self.interval = target, width, verbose, interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self.stream = stream or sys.stdout
        self._dynamic = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._totals: dict[str, list[float]] = {}
        self._order: list[str] = []
        self._seen = 0
        self._start = time.time()
        self._last_update = 0.0
        self._total_width = 0

    def update(self, current: int, values: list[tuple[str, float]] | None = None, finalize: bool | None = None) -> None:
        """Moves the bar to ``current``; ``values`` are ``(name, value)`` pairs to average."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        span = max(current - self._seen, 1)
        for name, value in values or []:
            if name not in self._totals:
                self._order.append(name)
                self._totals[name] = [0.0, 0.0]
            if name in self.stateful_metrics:
                self._totals[name] = [float(value), 1.0]
            else:
                self._totals[name][0] += float(value) * span
                self._totals[name][1] += span
        self._seen = current
        now = time.time()
        if self.verbose == 1:
            if not finalize and now - self._last_update < self.interval:
                return
            if self._dynamic or finalize:
                self._write_bar(current, now, finalize)
        elif self.verbose == 2 and finalize:
            elapsed = now - self._start
            line = f"{current}/{self.target} - {int(elapsed)}s" + self._values_text()
            line += f" - {self._per_unit(elapsed, current)}"
            self.stream.write(line + "\n")
            self.stream.flush()
        self._last_update = now

    def add(self, n: int, values: list[tuple[str, float]] | None = None) -> None:
        self.update(self._seen + n, values)

    def _values_text(self) -> str:
        text = ""
        for name in self._order:
            total, count = self._totals[name]
            text += f" - {name}:" + format_value(total / max(count, 1))
        return text

    def _per_unit(self, elapsed: float, current: int) -> str:
        per = elapsed / max(current, 1)
        if per >= 1:
            return f"{per:.0f}s/{self.unit_name}"
        if per >= 1e-3:
            return f"{per * 1e3:.0f}ms/{self.unit_name}"
        return f"{per * 1e6:.0f}us/{self.unit_name}"

    def _write_bar(self, current: int, now: float, finalize: bool) -> None:
        if self.target is not None:
            digits = len(str(self.target))
            bar = f"{current:{digits}d}/{self.target} ["
            filled = int(self.width * current / self.target) if self.target else self.width
            bar += "=" * max(filled - 1, 0) + (">" if current < self.target else "=") if filled > 0 else ""
            bar += "." * (self.width - filled) + "]"
        else:
            bar = f"{current:7d}/Unknown"
        elapsed = now - self._start
        if finalize:
            info = f" - {int(elapsed)}s {self._per_unit(elapsed, current)}"
        else:
            eta = elapsed / max(current, 1) * ((self.target or current) - current)
            info = f" - ETA: {int(eta)}s"
        line = bar + info + self._values_text()
        prefix = "\r" if self._dynamic else ""
        pad = " " * max(self._total_width - len(line), 0)
        self._total_width = len(line)
        self.stream.write(prefix + line + pad + ("\n" if finalize else ""))
        self.stream.flush()
