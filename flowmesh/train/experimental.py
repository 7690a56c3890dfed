# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.train.experimental``: loss scaling (the names flowmesh has)."""

from flowmesh.train.loss_scale import (
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
