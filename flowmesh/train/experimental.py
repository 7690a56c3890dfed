# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.train.experimental``: loss scaling; the object-checkpoint names (``PythonState`` and
the checkpoint sharding callbacks) are real; ``tf.train.Saver`` saves ``PythonState`` objects."""

from flowmesh.train.checkpoint_sharding import (
    MaxShardSizePolicy,
    ShardableTensor,
    ShardByTaskPolicy,
    ShardingCallback,
)
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
