"""Shared logic of callbacks that watch a logged quantity (``monitor``, ``mode``, ``min_delta``)."""

from __future__ import annotations

import warnings

import numpy as np


class Monitor:
    """Decides whether a new value of ``monitor`` improves on the best so far."""

    def __init__(self, monitor: str, mode: str, min_delta: float = 0.0):
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"Monitor mode {mode!r} is unknown, fallback to auto mode.")
            mode = "auto"
        if mode == "auto":
            mode = "max" if ("acc" in monitor or monitor.startswith("fmeasure") or "auc" in monitor) else "min"
        self.monitor, self.mode, self.min_delta = monitor, mode, abs(min_delta)
        self.best = np.inf if mode == "min" else -np.inf

    def reset(self) -> None:
        self.best = np.inf if self.mode == "min" else -np.inf

    def improved(self, current: float, reference: float | None = None) -> bool:
        reference = self.best if reference is None else reference
        if self.mode == "min":
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def value(self, logs: dict | None, who: str) -> float | None:
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"{who} conditioned on metric `{self.monitor}` which is not available. Available "
                          f"metrics are: {','.join(sorted(logs or {}))}")
        return value
