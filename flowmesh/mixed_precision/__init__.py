"""``tf.mixed_precision`` (TensorFlow 1.x): loss scales and the loss-scaling optimizer
(:mod:`flowmesh.train.loss_scale`)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "mixed_precision")

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer",
           "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite", "experimental"]
