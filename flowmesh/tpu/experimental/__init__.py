"""``tf.tpu.experimental``: not supported (TPUs are not a flowmesh device)."""

from __future__ import annotations

from flowmesh.tpu.experimental import embedding as embedding
from flowmesh.unsupported import TPU, unsupported

DeviceAssignment = unsupported("tpu.experimental.DeviceAssignment", TPU)
DeviceOrderMode = unsupported("tpu.experimental.DeviceOrderMode", TPU)
HardwareFeature = unsupported("tpu.experimental.HardwareFeature", TPU)
TPUSystemMetadata = unsupported("tpu.experimental.TPUSystemMetadata", TPU)
Topology = unsupported("tpu.experimental.Topology", TPU)
embedding_column = unsupported("tpu.experimental.embedding_column", TPU)
initialize_tpu_system = unsupported("tpu.experimental.initialize_tpu_system", TPU)
shared_embedding_columns = unsupported("tpu.experimental.shared_embedding_columns", TPU)
shutdown_tpu_system = unsupported("tpu.experimental.shutdown_tpu_system", TPU)
