# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.train.experimental``: loss scaling; the object-checkpoint names (``PythonState`` and
the checkpoint sharding callbacks) are stand-ins, as ``tf.train.Checkpoint`` is."""

from flowmesh.train.loss_scale import (
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
from flowmesh.train.training_loops import OBJECT_CHECKPOINTS as _OBJECT_CHECKPOINTS
from flowmesh.unsupported import unsupported as _unsupported

PythonState = _unsupported("train.experimental.PythonState", _OBJECT_CHECKPOINTS)
ShardableTensor = _unsupported("train.experimental.ShardableTensor", _OBJECT_CHECKPOINTS)
ShardingCallback = _unsupported("train.experimental.ShardingCallback", _OBJECT_CHECKPOINTS)
ShardByTaskPolicy = _unsupported("train.experimental.ShardByTaskPolicy", _OBJECT_CHECKPOINTS)
MaxShardSizePolicy = _unsupported("train.experimental.MaxShardSizePolicy", _OBJECT_CHECKPOINTS)
