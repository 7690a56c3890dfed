"""``ModelCheckpoint``: saves the model (or its weights) after epochs, optionally only when
the monitored quantity improved. ``filepath`` may contain ``{epoch:02d}`` and log keys
(``{val_loss:.2f}``)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.callbacks.base import Callback
from flowmesh.keras.callbacks.monitor import Monitor


class ModelCheckpoint(Callback):
    """Saves with ``model.save`` (HDF5) or ``model.save_weights`` every ``save_freq``
    (``"epoch"`` or a number of batches)."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False, mode: str = "auto",
                 save_freq: Any = "epoch", initial_value_threshold: float | None = None, **kwargs: Any):
        super().__init__()
        self.filepath = str(filepath)
        self.verbose = verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.save_freq = save_freq
        self._monitor = Monitor(monitor, mode)
        if initial_value_threshold is not None:
            self._monitor.best = initial_value_threshold
        self._batches = 0
        self._epoch = 0

    @property
    def best(self) -> float:
        return self._monitor.best

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if isinstance(self.save_freq, int):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, logs, batch)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.save_freq == "epoch":
            self._save(epoch, logs, None)

    def _save(self, epoch: int, logs: dict | None, batch: int | None) -> None:
        logs = dict(logs or {})
        path = self.filepath.format(epoch=epoch + 1, batch=(batch or 0) + 1, **logs)
        if self.save_best_only:
            current = self._monitor.value(logs, "Can save best model only with")
            if current is None:
                return
            if not self._monitor.improved(current):
                if self.verbose:
                    print(f"\nEpoch {epoch + 1}: {self._monitor.monitor} did not improve from "
                          f"{self._monitor.best:.5f}")
                return
            if self.verbose:
                print(f"\nEpoch {epoch + 1}: {self._monitor.monitor} improved from {self._monitor.best:.5f} to "
                      f"{current:.5f}, saving model to {path}")
            self._monitor.best = current
        elif self.verbose:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
