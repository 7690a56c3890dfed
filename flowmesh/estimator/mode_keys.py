"""``tf.estimator.ModeKeys``: the mode a ``model_fn`` builds its graph for."""

from __future__ import annotations


class ModeKeys:
    """``TRAIN`` (train_op required), ``EVAL`` (loss + metrics), ``PREDICT`` (predictions)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
