"""``tf.distribute.experimental``: the names TensorFlow 1.x kept there."""

from flowmesh.distribute.central_storage_strategy import CentralStorageStrategy
from flowmesh.distribute.collective_all_reduce_strategy import (
    CollectiveCommunication,
    CommunicationImplementation,
    MultiWorkerMirroredStrategy,
)
from flowmesh.distribute.options import CollectiveHints, CommunicationOptions
from flowmesh.distribute.parameter_server_strategy import ParameterServerStrategy
from flowmesh.unsupported import TPU, unsupported

TPUStrategy = unsupported("distribute.experimental.TPUStrategy", TPU)

__all__ = ["CentralStorageStrategy", "CollectiveCommunication", "CollectiveHints", "CommunicationImplementation",
           "CommunicationOptions", "MultiWorkerMirroredStrategy", "ParameterServerStrategy", "TPUStrategy"]
