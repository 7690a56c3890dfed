"""Session configuration value objects: ``ConfigProto``, ``RunOptions``, ``RunMetadata``.

These mirror TensorFlow's protocol buffers field for field where flowmesh uses them;
fields flowmesh accepts but ignores are documented as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_LOG_DEVICE_PLACEMENT = [False]


def set_log_device_placement(enabled: bool) -> None:
    """``tf.debugging.set_log_device_placement``: sessions created without a ``config`` log
    the device of every op they place (as ``ConfigProto(log_device_placement=True)``)."""
    _LOG_DEVICE_PLACEMENT[0] = bool(enabled)


def get_log_device_placement() -> bool:
    """``tf.debugging.get_log_device_placement``: the setting of
    :func:`set_log_device_placement`."""
    return _LOG_DEVICE_PLACEMENT[0]


@dataclass
class GPUOptions:
    """``tf.GPUOptions``. ``visible_device_list`` restricts which CUDA devices a session
    uses; ``allow_growth`` and ``per_process_gpu_memory_fraction`` are accepted and ignored
    (torch's caching allocator always grows on demand)."""

    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclass
class GraphOptions:
    """``tf.GraphOptions``; accepted for compatibility, not used."""

    enable_bfloat16_sendrecv: bool = False
    build_cost_model: int = 0


@dataclass
class ConfigProto:
    """``tf.ConfigProto``: session configuration.

    Attributes:
        log_device_placement: print ``name: (OpType): device`` for every placed op.
        allow_soft_placement: fall back to an available device when a request can't be met.
        device_count: e.g. ``{"CPU": 4}`` for four logical CPU devices, ``{"GPU": 0}``.
        device_filters: restricts a distributed session to the listed tasks.
        inter_op_parallelism_threads: accepted; partitions always run concurrently.
        intra_op_parallelism_threads: torch intra-op threads (0 keeps torch's setting).
        operation_timeout_in_ms: default deadline of every step (0 = none).
    """

    log_device_placement: bool = False
    allow_soft_placement: bool = False
    device_count: dict[str, int] = field(default_factory=dict)
    device_filters: list[str] = field(default_factory=list)
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    operation_timeout_in_ms: int = 0
    use_per_session_threads: bool = False
    isolate_session_state: bool = False
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    graph_options: GraphOptions = field(default_factory=GraphOptions)

    def CopyFrom(self, other: ConfigProto) -> None:  # noqa: N802 - protobuf API
        self.__dict__.update(other.__dict__)


class RunOptions:
    """``tf.RunOptions``: per-step options (``timeout_in_ms``, ``trace_level``)."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, timeout_in_ms: int = 0, trace_level: int = 0, **unused: Any):
        self.timeout_in_ms = timeout_in_ms
        self.trace_level = trace_level
        self.output_partition_graphs = bool(unused.get("output_partition_graphs", False))


@dataclass
class NodeExecStats:
    """One op's execution in a traced step (TensorFlow's ``NodeExecStats`` fields).

    Attributes:
        node_name: the node (``_send/...``/``_recv/...`` for cross-device transfers).
        op_type: the op type (``_Send``/``_Recv`` for transfers).
        all_start_micros: start, microseconds since the epoch.
        all_end_rel_micros: duration in microseconds.
        thread_id: the executing thread (0 per device).
        timeline_label: ``name = OpType(input, ...)``, as TensorFlow writes it.
    """

    node_name: str
    op_type: str
    all_start_micros: int
    all_end_rel_micros: int
    thread_id: int = 0
    timeline_label: str = ""

    @property
    def op_start_rel_micros(self) -> int:
        return 0

    @property
    def op_end_rel_micros(self) -> int:
        return self.all_end_rel_micros


@dataclass
class DeviceStepStats:
    device: str
    node_stats: list[NodeExecStats] = field(default_factory=list)


@dataclass
class StepStats:
    dev_stats: list[DeviceStepStats] = field(default_factory=list)


class RunMetadata:
    """``tf.RunMetadata``: filled by ``Session.run`` when tracing is requested."""

    def __init__(self) -> None:
        self.step_stats = StepStats()
        self.partition_graphs: list[Any] = []
        self.cost_graph: Any = None

    def Clear(self) -> None:  # noqa: N802 - protobuf API
        self.__init__()  # type: ignore[misc]

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf API
        """The ``tensorflow.RunMetadata`` wire bytes of the step statistics (what
        ``FileWriter.add_run_metadata`` stores and TensorFlow's ``RunMetadata`` parses)."""
        from flowmesh.protos.step_stats import RunMetadata as RunMetadataProto

        proto = RunMetadataProto()
        for device in self.step_stats.dev_stats:
            dev = proto.step_stats.dev_stats.add(device=device.device)
            for node in device.node_stats:
                dev.node_stats.add(
                    node_name=node.node_name, all_start_micros=node.all_start_micros,
                    op_start_rel_micros=node.op_start_rel_micros, op_end_rel_micros=node.op_end_rel_micros,
                    all_end_rel_micros=node.all_end_rel_micros, timeline_label=node.timeline_label,
                    thread_id=node.thread_id)
        return proto.SerializeToString()

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802 - protobuf API
        """Replaces the step statistics with those of serialized ``RunMetadata`` bytes (the
        node's op type is read back from its ``timeline_label``, ``name = OpType(...)``)."""
        from flowmesh.protos.step_stats import RunMetadata as RunMetadataProto

        proto = RunMetadataProto.FromString(bytes(data))
        self.Clear()
        for dev in proto.step_stats.dev_stats:
            device = DeviceStepStats(dev.device)
            for node in dev.node_stats:
                op_type = node.timeline_label.partition(" = ")[2].partition("(")[0]
                device.node_stats.append(NodeExecStats(
                    node.node_name, op_type, node.all_start_micros, node.all_end_rel_micros,
                    node.thread_id, node.timeline_label))
            self.step_stats.dev_stats.append(device)
