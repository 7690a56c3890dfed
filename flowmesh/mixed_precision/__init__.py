"""``tf.mixed_precision`` (TensorFlow 1.x): loss scales and the loss-scaling optimizer
(:mod:`flowmesh.train.loss_scale`)."""

from __future__ import annotations

from flowmesh.mixed_precision import experimental as experimental
from flowmesh.train.loss_scale import (
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer",
           "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite", "experimental"]
