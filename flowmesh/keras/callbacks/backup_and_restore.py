"""``BackupAndRestore``: resumes an interrupted ``fit`` from its last finished epoch.

After every epoch the graph's variables (model weights, optimizer slots and step counter)
are saved with ``tf.train.Saver`` to ``backup_dir/ckpt`` and the epoch to
``backup_dir/training_state.json`` (written to a temporary file and renamed, so a kill
leaves the previous state). When ``fit`` starts and a state exists, the variables are
restored and ``fit`` continues with the next epoch. A finished ``fit`` deletes the
backup (``delete_checkpoint=True``). Under a multi-worker strategy only the chief (rank 0)
writes, and every worker restores the chief's backup (as TensorFlow does: ``backup_dir``
must be on storage all workers read), so all resume from the same epoch even when the
chief was stopped while writing (the state file still names the previous checkpoint,
which is kept: ``ckpt-<epoch>``, the last two).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from flowmesh.keras import backend
from flowmesh.keras.callbacks.base import Callback


class BackupAndRestore(Callback):
    """Backs up training state each epoch (or every ``save_freq`` batches) to ``backup_dir``."""

    def __init__(self, backup_dir: str, save_freq: Any = "epoch", delete_checkpoint: bool = True,
                 save_before_preemption: bool = False):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self.backup_dir, self.save_freq, self.delete_checkpoint = str(backup_dir), save_freq, delete_checkpoint
        self._saver: Any = None
        self._epoch = 0
        self._batches = 0

    @property
    def _is_chief(self) -> bool:
        strategy = getattr(self.model, "_distribution", None)
        info = getattr(getattr(strategy, "extended", None), "info", None)
        return (getattr(info, "rank", 0) or 0) == 0

    @property
    def _state_path(self) -> str:
        return os.path.join(self.backup_dir, "training_state.json")

    def _get_saver(self) -> Any:
        if self._saver is None:
            from flowmesh.ops.variables import global_variables
            from flowmesh.train.saver import Saver

            graph = backend.get_session().graph
            with graph.as_default():
                self._saver = Saver(var_list=global_variables(), max_to_keep=2)
        return self._saver

    def on_train_begin(self, logs: dict | None = None) -> None:
        if not os.path.exists(self._state_path):
            return
        with open(self._state_path) as f:
            state = json.load(f)
        self._get_saver().restore(backend.get_session(), state["checkpoint"])
        self.model._resume_epoch = int(state["epoch"]) + 1

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if isinstance(self.save_freq, int):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._backup(self._epoch - 1)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.save_freq == "epoch":
            self._backup(epoch)

    def _backup(self, epoch: int) -> None:
        if not self._is_chief:
            return
        os.makedirs(self.backup_dir, exist_ok=True)
        path = self._get_saver().save(backend.get_session(), os.path.join(self.backup_dir, "ckpt"),
                                      global_step=epoch + 1, write_meta_graph=False)
        tmp = self._state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"epoch": epoch, "checkpoint": path}, f)
        os.replace(tmp, self._state_path)

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.delete_checkpoint and self._is_chief and not self.model.stop_training and \
                os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir, ignore_errors=True)
