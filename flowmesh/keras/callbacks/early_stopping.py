"""``EarlyStopping``: stops ``fit`` when the monitored quantity stops improving."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.callbacks.base import Callback
from flowmesh.keras.callbacks.monitor import Monitor


class EarlyStopping(Callback):
    """Stops after ``patience`` epochs without an improvement larger than ``min_delta``;
    ``restore_best_weights`` puts back the weights of the best epoch."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0.0, patience: int = 0, verbose: int = 0,
                 mode: str = "auto", baseline: float | None = None, restore_best_weights: bool = False,
                 start_from_epoch: int = 0):
        super().__init__()
        self._monitor = Monitor(monitor, mode, min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights: Any = None
        self.best_epoch = 0

    @property
    def best(self) -> float:
        return self._monitor.best

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self._monitor.reset()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        current = self._monitor.value(logs, "Early stopping")
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._monitor.improved(current):
            self._monitor.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._monitor.improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch: "
                          f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
