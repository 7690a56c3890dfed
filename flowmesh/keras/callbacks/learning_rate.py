"""``LearningRateScheduler`` and ``ReduceLROnPlateau``: change ``model.optimizer.lr`` (a
variable) between epochs, without rebuilding the graph."""

from __future__ import annotations

import inspect
from typing import Any

from flowmesh.keras import backend
from flowmesh.keras.callbacks.base import Callback
from flowmesh.keras.callbacks.monitor import Monitor


def _lr(model: Any) -> float:
    if not hasattr(model.optimizer, "lr"):
        raise ValueError('Optimizer must have a "lr" attribute (use a tf.keras.optimizers optimizer).')
    return float(backend.get_value(model.optimizer.lr))


class LearningRateScheduler(Callback):
    """Sets the learning rate to ``schedule(epoch)`` or ``schedule(epoch, lr)`` at each epoch's start."""

    def __init__(self, schedule: Any, verbose: int = 0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        lr = _lr(self.model)
        params = inspect.signature(self.schedule).parameters
        value = self.schedule(epoch, lr) if len(params) >= 2 else self.schedule(epoch)
        if not isinstance(value, (float, int)) or isinstance(value, bool):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(f'The output of the "schedule" function should be float, got {value!r}') from None
        backend.set_value(self.model.optimizer.lr, float(value))
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {value}.")

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            logs["lr"] = _lr(self.model)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` after ``patience`` epochs without improvement
    (not below ``min_lr``; waits ``cooldown`` epochs after a reduction)."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10, verbose: int = 0,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0.0, **kwargs: Any):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Got {factor}")
        self._monitor = Monitor(monitor, mode, min_delta)
        self._monitor.min_delta = min_delta  # Keras compares with the signed delta
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self.wait = 0
        self.cooldown_counter = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._monitor.reset()
        self.wait, self.cooldown_counter = 0, 0

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs if logs is not None else {}
        logs["lr"] = _lr(self.model)
        current = self._monitor.value(logs, "Learning rate reduction")
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._monitor.improved(current):
            self._monitor.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = _lr(self.model)
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    backend.set_value(self.model.optimizer.lr, new)
                    if self.verbose:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
