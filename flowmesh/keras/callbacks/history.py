"""``History`` (what ``fit`` returns) and ``ProgbarLogger`` (the verbose output)."""

from __future__ import annotations

import sys
from typing import Any

from flowmesh.keras.callbacks.base import Callback
from flowmesh.keras.utils.progbar import Progbar


class History(Callback):
    """Records every epoch's logs: ``history.history["loss"]`` is the list of epoch losses."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch: list[int] = []
        self.history: dict[str, list[float]] = {}

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


class ProgbarLogger(Callback):
    """Prints ``Epoch i/N`` and a bar over samples (verbose=1) or one line per epoch (verbose=2)."""

    def __init__(self, count_mode: str = "samples", stateful_metrics: Any = None, stream: Any = None):
        super().__init__()
        self.count_mode = count_mode
        self.stream = stream
        self._bar: Progbar | None = None
        self._seen = 0

    def _out(self) -> Any:
        return self.stream or sys.stdout

    def on_train_begin(self, logs: dict | None = None) -> None:
        if self.params.get("verbose") and self.params.get("announce"):
            self._out().write(self.params["announce"] + "\n")

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        verbose = self.params.get("verbose", 0)
        if not verbose:
            return
        epochs = self.params.get("epochs", 1)
        if epochs > 1 or verbose:
            self._out().write(f"Epoch {epoch + 1}/{epochs}\n")
        target = self.params.get("samples") if self.count_mode == "samples" else self.params.get("steps")
        unit = "sample" if self.count_mode == "samples" else "step"
        self._bar = Progbar(target, verbose=verbose, unit_name=unit, stream=self._out())
        self._seen = 0

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self._bar is None:
            return
        logs = logs or {}
        self._seen += logs.get("size", 1) if self.count_mode == "samples" else 1
        values = [(k, logs[k]) for k in self.params.get("metrics", []) if k in logs and not k.startswith("val_")]
        self._bar.update(self._seen, values, finalize=False)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._bar is None:
            return
        logs = logs or {}
        values = [(k, logs[k]) for k in self.params.get("metrics", []) if k in logs and k.startswith("val_")]
        self._bar.stateful_metrics.update(k for k, _ in values)
        self._bar.update(self._seen, values, finalize=True)
        self._bar = None
