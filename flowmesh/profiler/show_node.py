"""A node of a profile view (tfprof's ``ShowNode``): one graph node's own statistics for the
chosen step and the totals over the nodes accounted below it, kept in a ``GraphNodeProto``;
plus the display rules every view shares (which nodes to account, show, expand, in which
order)."""

from __future__ import annotations

from typing import Any

from flowmesh.profiler.model import ProfileNode
from flowmesh.profiler.options import Options
from flowmesh.protos.tfprof import GraphNodeProto

ROOT_NAME = "_TFProfRoot"
_TOTALS = ("run_count", "exec_micros", "accelerator_exec_micros", "cpu_exec_micros", "requested_bytes",
           "peak_bytes", "residual_bytes", "output_bytes", "parameters", "float_ops")


def _shape_proto(proto: Any, dims: list[int]) -> None:
    for d in dims:
        proto.dim.add(size=d)


class ShowNode:
    """A view node over ``node`` (None for a scope or root that is no graph node)."""

    def __init__(self, name: str, node: ProfileNode | None = None) -> None:
        self.name = name
        self.node = node
        self.children: list[ShowNode] = []
        self.show_children: list[ShowNode] = []
        self.account = False
        self.proto = GraphNodeProto(name=name)

    @property
    def types(self) -> list[str]:
        """The node's op type and op-log types (none for a scope or the root)."""
        return self.node.types if self.node is not None else []

    def reinit(self, step: int) -> None:
        """Fills the node's own statistics for ``step`` (-1: averaged over the steps)."""
        proto = self.proto
        proto.Clear()
        proto.name = self.name
        node = self.node
        if node is None:
            return
        if node.device:
            proto.devices.append(node.device)
        proto.run_count = node.run_count(step)
        proto.accelerator_exec_micros = node.accelerator_micros(step)
        proto.cpu_exec_micros = node.cpu_micros(step)
        proto.exec_micros = proto.accelerator_exec_micros + proto.cpu_exec_micros
        proto.parameters = node.parameters
        proto.float_ops = node.float_ops * proto.run_count if node.steps else node.float_ops  # as run
        if proto.run_count:  # flowmesh's traces hold no allocator records: the outputs' static sizes
            proto.requested_bytes = proto.output_bytes = node.output_bytes * proto.run_count
        for index, dims in node.input_shapes.items():
            _shape_proto(proto.input_shapes[index], dims)

    def reset_totals(self) -> None:
        """Clears the ``total_*`` fields."""
        proto = self.proto
        for key in _TOTALS:
            proto.ClearField(f"total_{key}")
        proto.ClearField("total_definition_count")

    def add_self_to_totals(self) -> None:
        """Adds the node's own statistics (and one definition) to its totals."""
        proto = self.proto
        proto.total_definition_count += 1
        for key in _TOTALS:
            setattr(proto, f"total_{key}", getattr(proto, f"total_{key}") + getattr(proto, key))

    def aggregate_totals(self, other: ShowNode) -> None:
        """Adds ``other``'s totals to this node's."""
        proto, theirs = self.proto, other.proto
        proto.total_definition_count += theirs.total_definition_count
        for key in _TOTALS:
            setattr(proto, f"total_{key}", getattr(proto, f"total_{key}") + getattr(theirs, f"total_{key}"))


def re_account(show: ShowNode, options: Options) -> bool:
    """Refreshes the node's statistics and says whether its types are accounted."""
    show.reinit(options.step)
    if options.matches_all("account_type_regexes"):
        return True
    return any(options.matches("account_type_regexes", t) for t in show.types)


def should_show(show: ShowNode, options: Options, depth: int) -> bool:
    """Whether the node passes the ``min_*``, ``max_depth`` and name filters (the root always does)."""
    if show.name == ROOT_NAME:
        return True
    p = show.proto
    if (p.total_requested_bytes < options.min_bytes or p.total_peak_bytes < options.min_peak_bytes
            or p.total_residual_bytes < options.min_residual_bytes
            or p.total_output_bytes < options.min_output_bytes or p.total_exec_micros < options.min_micros
            or p.total_accelerator_exec_micros < options.min_accelerator_micros
            or p.total_cpu_exec_micros < options.min_cpu_micros or p.parameters < options.min_params
            or p.float_ops < options.min_float_ops or p.run_count < options.min_occurrence
            or depth > options.max_depth):
        return False
    if not (options.matches_all("show_name_regexes") or options.matches("show_name_regexes", show.name)):
        return False
    return not options.matches("hide_name_regexes", show.name)


def should_expand(show: ShowNode, options: Options, depth: int) -> bool:
    """Whether to look below the node (not trimmed by name, not past ``max_depth``)."""
    return not options.matches("trim_name_regexes", show.name) and depth <= options.max_depth


_ORDER_KEYS = {"bytes": "total_requested_bytes", "peak_bytes": "total_peak_bytes",
               "residual_bytes": "total_residual_bytes", "output_bytes": "total_output_bytes",
               "micros": "total_exec_micros", "accelerator_micros": "total_accelerator_exec_micros",
               "cpu_micros": "total_cpu_exec_micros", "params": "total_parameters",
               "float_ops": "total_float_ops", "occurrence": "total_run_count"}


def sort_nodes(nodes: list[Any], options: Options) -> list[Any]:
    """Siblings in ``order_by`` order: by name, or largest total first (ties by name)."""
    if options.order_by == "name":
        return sorted(nodes, key=lambda n: n.name)
    key = _ORDER_KEYS[options.order_by]
    return sorted(nodes, key=lambda n: (-getattr(n.proto, key), n.name))
