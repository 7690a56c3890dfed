"""``tf.keras.callbacks``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras.callbacks")

__all__ = ["BackupAndRestore", "BaseLogger", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History",
           "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau",
           "RemoteMonitor", "TensorBoard", "TerminateOnNaN"]
