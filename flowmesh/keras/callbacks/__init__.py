"""``tf.keras.callbacks``."""

from flowmesh.keras.callbacks.backup_and_restore import BackupAndRestore
from flowmesh.keras.callbacks.base import Callback, CallbackList
from flowmesh.keras.callbacks.early_stopping import EarlyStopping
from flowmesh.keras.callbacks.history import History, ProgbarLogger
from flowmesh.keras.callbacks.learning_rate import LearningRateScheduler, ReduceLROnPlateau
from flowmesh.keras.callbacks.loggers import (
    BaseLogger,
    CSVLogger,
    LambdaCallback,
    RemoteMonitor,
    TensorBoard,
    TerminateOnNaN,
)
from flowmesh.keras.callbacks.model_checkpoint import ModelCheckpoint

__all__ = ["BackupAndRestore", "BaseLogger", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History",
           "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau",
           "RemoteMonitor", "TensorBoard", "TerminateOnNaN"]
