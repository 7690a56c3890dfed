"""What the profiler knows about each graph node: its op type and the types an ``OpLogProto``
adds, its device, parameters (the element count of its ``shape`` attribute, as TensorFlow's
tfprof counts them), float operations, shapes, the code line that created it, and per traced
step its run count and execution time (from ``RunMetadata.step_stats``)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from flowmesh.core.graph import Graph
from flowmesh.core.shapes import TensorShape


@dataclass
class StepTimes:
    """One traced step of one node: how often it ran and for how long (microseconds)."""

    run_count: int = 0
    accelerator_micros: int = 0
    cpu_micros: int = 0


def _dims(shape: TensorShape) -> list[int]:
    return [-1 if d is None else int(d) for d in shape.as_list()] if shape.rank is not None else []


def is_accelerator(device: str) -> bool:
    """Whether ``device`` names a GPU or TPU."""
    lowered = device.lower()
    return "gpu" in lowered or "tpu" in lowered


@dataclass
class ProfileNode:
    """One graph node as the profiler sees it."""

    name: str
    op_type: str
    types: list[str]
    device: str
    shape: list[int] | None
    input_shapes: dict[int, list[int]]
    inputs: list[str]
    float_ops: int = 0
    trace: str = ""
    data_format: str = ""
    output_bytes: int = 0
    steps: dict[int, StepTimes] = field(default_factory=dict)

    @property
    def parameters(self) -> int:
        """The element count of the node's ``shape`` attribute when fully known, else 0."""
        if not self.shape or any(d < 0 for d in self.shape):
            return 0
        return math.prod(self.shape)

    def _per_step(self, step: int, value: Any) -> int:
        if not self.steps:
            return 0
        if step >= 0:
            times = self.steps.get(step)
            return value(times) if times is not None else 0
        return sum(value(t) for t in self.steps.values()) // len(self.steps)

    def run_count(self, step: int) -> int:
        """How often the node ran in ``step`` (-1: per added step, on average)."""
        return self._per_step(step, lambda t: t.run_count)

    def accelerator_micros(self, step: int) -> int:
        """Microseconds on accelerators in ``step`` (-1: average)."""
        return self._per_step(step, lambda t: t.accelerator_micros)

    def cpu_micros(self, step: int) -> int:
        """Microseconds on CPUs in ``step`` (-1: average)."""
        return self._per_step(step, lambda t: t.cpu_micros)

    def exec_micros(self, step: int) -> int:
        """Accelerator plus CPU microseconds in ``step`` (-1: average)."""
        return self.accelerator_micros(step) + self.cpu_micros(step)


def _output_bytes(op: Any) -> int:
    """The bytes of the op's outputs whose static shapes are fully known (strings and
    resources excluded): what it allocates when it runs."""
    total = 0
    for t in op.outputs:
        if t.shape.is_fully_defined() and t.dtype.name not in ("string", "resource", "variant"):
            total += t.shape.num_elements() * t.dtype.size
    return total


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else (value or "")


def _shape_attr(node_def: Any) -> list[int] | None:
    """The dims of the node's ``shape`` attribute (variables, placeholders), as tfprof reads it."""
    if "shape" not in node_def.attr or not node_def.attr["shape"].HasField("shape"):
        return None
    shape = node_def.attr["shape"].shape
    return None if shape.unknown_rank else [int(d.size) for d in shape.dim]


class ProfileModel:
    """The profiled graph's nodes (by name) and the steps added to it."""

    def __init__(self, graph: Graph, op_log: Any) -> None:
        self.graph = graph
        self.nodes: dict[str, ProfileNode] = {}
        self.steps: list[int] = []
        self._spans: dict[str, int] = defaultdict(int)
        for op in graph.get_operations():
            node_def = op.node_def
            self.nodes[op.name] = ProfileNode(
                name=op.name, op_type=node_def.op, types=[node_def.op], device=op.device,
                shape=_shape_attr(node_def),
                input_shapes={i: _dims(t.shape) for i, t in enumerate(op.inputs)},
                inputs=[t.op.name for t in op.inputs] + [c.name for c in op.control_inputs],
                trace=f"{op.traceback[0]}:{op.traceback[1]}" if op.traceback else "",
                data_format=_text(op.attrs.get("data_format")), output_bytes=_output_bytes(op))
        self._add_op_log(op_log)

    def _add_op_log(self, op_log: Any) -> None:
        strings = dict(op_log.id_to_string) if op_log is not None else {}
        for entry in op_log.log_entries if op_log is not None else ():
            node = self.nodes.get(entry.name)
            if node is None:
                continue
            node.types.extend(t for t in entry.types if t not in node.types)
            if entry.float_ops:
                node.float_ops = entry.float_ops
            if entry.code_def.traces and not node.trace:
                trace = entry.code_def.traces[-1]
                node.trace = f"{strings.get(trace.file_id, '')}:{trace.lineno}"

    def add_step(self, step: int, run_meta: Any) -> None:
        """Adds the node timings of one traced ``Session.run`` (its ``RunMetadata``).

        Raises:
            TypeError: ``run_meta`` has no ``step_stats``.
        """
        step_stats = getattr(run_meta, "step_stats", None)
        if step_stats is None:
            raise TypeError(f"add_step(step, run_meta): run_meta must be a tf.RunMetadata filled by "
                            f"Session.run with RunOptions(trace_level=FULL_TRACE), got {type(run_meta).__name__}")
        times: dict[str, StepTimes] = defaultdict(StepTimes)
        devices: dict[str, str] = {}
        for device in step_stats.dev_stats:
            ends = [(s.all_start_micros, s.all_start_micros + s.all_end_rel_micros) for s in device.node_stats]
            if ends:
                self._spans[device.device] += max(e for _, e in ends) - min(s for s, _ in ends)
            for stats in device.node_stats:
                name = stats.node_name.split(":")[0]
                if name not in self.nodes:
                    continue
                entry = times[name]
                entry.run_count += 1
                if is_accelerator(device.device):
                    entry.accelerator_micros += int(stats.all_end_rel_micros)
                else:
                    entry.cpu_micros += int(stats.all_end_rel_micros)
                devices[name] = device.device
        for name, entry in times.items():
            self.nodes[name].steps[step] = entry
            self.nodes[name].device = devices[name]
        if step not in self.steps:
            self.steps.append(step)

    def step_span_micros(self, device: str) -> int:
        """How long the traced steps lasted on ``device``, first start to last end, summed."""
        return self._spans.get(device, 0)
