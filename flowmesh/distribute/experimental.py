# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.distribute.experimental``: the names TensorFlow 1.x kept there."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "distribute.experimental")


__all__ = ["CentralStorageStrategy", "CollectiveCommunication", "CollectiveHints", "CommunicationImplementation",
           "CommunicationOptions", "MultiWorkerMirroredStrategy", "ParameterServerStrategy", "TPUStrategy"]
