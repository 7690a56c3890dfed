"""``tf.train``: optimizers, schedules, checkpoints, hooks, distributed training helpers."""

from flowmesh.checkpoint import (
    CheckpointState,
    NewCheckpointReader,
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
    remove_checkpoint,
    update_checkpoint_state,
)
from flowmesh.distributed.cluster_spec import ClusterDef, ClusterSpec, JobDef
from flowmesh.distributed.server import Server, ServerDef
from flowmesh.protos.example import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from flowmesh.summary.reader import summary_iterator
from flowmesh.train.adadelta import AdadeltaOptimizer
from flowmesh.train.adagrad import AdagradOptimizer
from flowmesh.train.adagrad_da import AdagradDAOptimizer
from flowmesh.train.adam import AdamOptimizer
from flowmesh.train.basic_session_run_hooks import (
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
from flowmesh.train.batching import (
    batch,
    batch_join,
    maybe_batch,
    maybe_batch_join,
    maybe_shuffle_batch,
    maybe_shuffle_batch_join,
    shuffle_batch,
    shuffle_batch_join,
)
from flowmesh.train.checkpoint_utils import init_from_checkpoint
from flowmesh.train.coordinator import Coordinator, LooperThread
from flowmesh.train.device_setter import (
    GreedyLoadBalancingStrategy,
    byte_size_load_fn,
    replica_device_setter,
)
from flowmesh.train.ftrl import FtrlOptimizer
from flowmesh.train.gradient_descent import GradientDescentOptimizer
from flowmesh.train.graph_io import write_graph
from flowmesh.train.input_producers import (
    input_producer,
    limit_epochs,
    match_filenames_once,
    range_input_producer,
    slice_input_producer,
    string_input_producer,
)
from flowmesh.train.learning_rate_decay import (
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    linear_scaling_warmup,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    polynomial_decay,
)
from flowmesh.train.meta_graph import export_meta_graph
from flowmesh.train.momentum import MomentumOptimizer
from flowmesh.train.monitored_session import (
    MonitoredSession,
    MonitoredTrainingSession,
    SingularMonitoredSession,
)
from flowmesh.train.moving_averages import ExponentialMovingAverage
from flowmesh.train.optimizer import Optimizer
from flowmesh.train.profiler_hook import ProfilerHook
from flowmesh.train.proximal import ProximalAdagradOptimizer, ProximalGradientDescentOptimizer
from flowmesh.train.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from flowmesh.train.rmsprop import RMSPropOptimizer
from flowmesh.train.saver import Saver, SaverDef, import_meta_graph
from flowmesh.train.scaffold import (
    ChiefSessionCreator,
    Scaffold,
    SessionCreator,
    WorkerSessionCreator,
)
from flowmesh.train.session_manager import SessionManager
from flowmesh.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from flowmesh.train.supervisor import Supervisor
from flowmesh.train.sync_replicas_optimizer import SyncReplicasOptimizer
from flowmesh.train.training_loops import (
    Checkpoint,
    CheckpointManager,
    CheckpointOptions,
    assert_global_step,
    basic_train_loop,
    checkpoints_iterator,
    do_quantize_training_on_graphdef,
    sdca_fprint,
    sdca_optimizer,
    sdca_shrink_l1,
)
from flowmesh.train.training_util import (
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)
from flowmesh.train.warm_starting_util import VocabInfo, warm_start

__all__ = [
    "BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features", "FloatList",
    "Int64List", "SequenceExample",
    "ClusterDef",
    "ExponentialMovingAverage",
    "ClusterSpec",
    "JobDef",
    "Server",
    "ServerDef",
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdagradDAOptimizer",
    "AdamOptimizer",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "QueueRunner",
    "SyncReplicasOptimizer",
    "add_queue_runner",
    "start_queue_runners",
    "batch", "batch_join", "maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
    "maybe_shuffle_batch_join", "shuffle_batch", "shuffle_batch_join",
    "input_producer", "limit_epochs", "match_filenames_once", "range_input_producer",
    "slice_input_producer", "string_input_producer",
    "RMSPropOptimizer",
    "cosine_decay",
    "cosine_decay_restarts",
    "exponential_decay",
    "inverse_time_decay",
    "linear_cosine_decay",
    "noisy_linear_cosine_decay",
    "linear_scaling_warmup",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
    "CheckpointState",
    "NewCheckpointReader",
    "Saver",
    "SaverDef",
    "checkpoint_exists",
    "export_meta_graph",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "import_meta_graph",
    "latest_checkpoint",
    "list_variables",
    "Checkpoint",
    "CheckpointManager",
    "CheckpointOptions",
    "assert_global_step",
    "basic_train_loop",
    "checkpoints_iterator",
    "do_quantize_training_on_graphdef",
    "piecewise_constant_decay",
    "sdca_fprint",
    "sdca_optimizer",
    "sdca_shrink_l1",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "init_from_checkpoint",
    "write_graph",
    "load_checkpoint",
    "load_variable",
    "remove_checkpoint",
    "update_checkpoint_state",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "ChiefSessionCreator",
    "Coordinator",
    "GreedyLoadBalancingStrategy",
    "byte_size_load_fn",
    "replica_device_setter",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "LooperThread",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "Scaffold",
    "SecondOrStepTimer",
    "SessionCreator",
    "SessionManager",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "SingularMonitoredSession",
    "StepCounterHook",
    "ProfilerHook",
    "VocabInfo",
    "warm_start",
    "StopAtStepHook",
    "SummarySaverHook",
    "Supervisor",
    "summary_iterator",
    "WorkerSessionCreator",
]

piecewise_constant_decay = piecewise_constant
from flowmesh.train import experimental as experimental  # noqa: E402 - tf.train.experimental (loss scaling)
