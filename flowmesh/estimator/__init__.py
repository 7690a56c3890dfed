"""``tf.estimator``: Estimator, EstimatorSpec, ModeKeys, RunConfig and the canned estimators."""

from flowmesh.estimator import export, inputs
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
from flowmesh.train.basic_session_run_hooks import (  # noqa: F401 - tf.estimator's aliases of the hooks
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from flowmesh.train.profiler_hook import ProfilerHook  # noqa: F401
from flowmesh.train.session_run_hook import (  # noqa: F401
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = [
    "BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "EstimatorSpec", "LinearClassifier",
    "LinearRegressor", "ModeKeys", "RunConfig", "EvalSpec", "TrainSpec", "train_and_evaluate", "export",
    "BestExporter", "Exporter", "FinalExporter", "LatestExporter", "inputs",
]
