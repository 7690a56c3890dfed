"""``tf.distribute.experimental``: the names TensorFlow 1.x kept there."""

from flowmesh.distribute.collective_all_reduce_strategy import (
    CollectiveCommunication,
    CommunicationImplementation,
    MultiWorkerMirroredStrategy,
)
from flowmesh.distribute.parameter_server_strategy import ParameterServerStrategy

__all__ = ["CollectiveCommunication", "CommunicationImplementation", "MultiWorkerMirroredStrategy",
           "ParameterServerStrategy"]
