"""``tf.estimator``: Estimator, EstimatorSpec, ModeKeys, RunConfig and the canned estimators."""

from flowmesh.estimator import export
from flowmesh.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from flowmesh.estimator.canned.dnn import DNNClassifier, DNNRegressor
from flowmesh.estimator.canned.dnn_linear_combined import (
                                                           DNNLinearCombinedClassifier,
                                                           DNNLinearCombinedRegressor,
)
from flowmesh.estimator.canned.linear import LinearClassifier, LinearRegressor
from flowmesh.estimator.estimator import Estimator
from flowmesh.estimator.estimator_spec import EstimatorSpec
from flowmesh.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.estimator.run_config import RunConfig
from flowmesh.estimator.training import EvalSpec, TrainSpec, train_and_evaluate

__all__ = [
    "BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "EstimatorSpec", "LinearClassifier",
    "LinearRegressor", "ModeKeys", "RunConfig", "EvalSpec", "TrainSpec", "train_and_evaluate", "export",
    "BestExporter", "Exporter", "FinalExporter", "LatestExporter",
]
