"""``tf.estimator``: Estimator, EstimatorSpec, ModeKeys, RunConfig."""

from flowmesh.estimator.estimator import Estimator
from flowmesh.estimator.estimator_spec import EstimatorSpec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.estimator.run_config import RunConfig

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig"]
