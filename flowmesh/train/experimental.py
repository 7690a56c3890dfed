# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.train.experimental``: loss scaling, ``PythonState`` (which ``tf.train.Saver`` saves)
and the checkpoint sharding callbacks."""

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
from flowmesh.train.python_state import PythonState
