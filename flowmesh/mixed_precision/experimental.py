# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.mixed_precision.experimental``: the loss scales."""

from flowmesh.train.loss_scale import DynamicLossScale, FixedLossScale, LossScale
