"""``tf.tpu``: not supported (TPUs are not a flowmesh device); every name raises
``UnimplementedError`` saying so."""

from __future__ import annotations

from flowmesh.tpu import experimental as experimental
from flowmesh.unsupported import TPU, unsupported

CrossShardOptimizer = unsupported("tpu.CrossShardOptimizer", TPU)
PaddingSpec = unsupported("tpu.PaddingSpec", TPU)
XLAOptions = unsupported("tpu.XLAOptions", TPU)
batch_parallel = unsupported("tpu.batch_parallel", TPU)
bfloat16_scope = unsupported("tpu.bfloat16_scope", TPU)
core = unsupported("tpu.core", TPU)
cross_replica_sum = unsupported("tpu.cross_replica_sum", TPU)
initialize_system = unsupported("tpu.initialize_system", TPU)
outside_compilation = unsupported("tpu.outside_compilation", TPU)
replicate = unsupported("tpu.replicate", TPU)
rewrite = unsupported("tpu.rewrite", TPU)
shard = unsupported("tpu.shard", TPU)
shutdown_system = unsupported("tpu.shutdown_system", TPU)
