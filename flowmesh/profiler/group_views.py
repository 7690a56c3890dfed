"""The ``op`` and ``code`` views (tfprof's ``TFOp`` and ``TFCode``): graph nodes grouped into
``MultiGraphNodeProto``s, one group per op type or per program line that created the nodes.

A group sums the statistics of its accounted nodes (those with a type matching
``account_type_regexes``; the nodes are its ``graph_nodes``). As in tfprof, the shown op
types form a chain under ``_TFProfRoot``, in ``order_by`` order: each group's ``children`` is
the next group and its ``total_*`` fields sum it and the groups after it; the code view's
groups are the root's children. ``max_depth`` limits how many groups show.

flowmesh records the program line that created an op, not its whole Python stack, so the
code view has one level; a group is named ``file:line:source`` (tfprof: ``file:line:function``).
"""

from __future__ import annotations

import linecache
import os
from collections import defaultdict
from typing import Any

from flowmesh.profiler.model import ProfileModel, ProfileNode
from flowmesh.profiler.options import Options
from flowmesh.profiler.show_node import ROOT_NAME, ShowNode, re_account, should_show, sort_nodes
from flowmesh.protos.tfprof import MultiGraphNodeProto

SUMMED = ("exec_micros", "accelerator_exec_micros", "cpu_exec_micros", "requested_bytes", "peak_bytes",
          "residual_bytes", "output_bytes", "parameters", "float_ops")


class GroupNode:
    """One group of graph nodes and its summed statistics, readable by the shared
    ``should_show`` / ``sort_nodes`` rules as ``proto``-like ``stats``."""

    def __init__(self, name: str, members: list[ProfileNode]) -> None:
        self.name = name
        self.members = [ShowNode(m.name, m) for m in members]
        self.proto = MultiGraphNodeProto(name=name)
        self.accounted: list[ShowNode] = []

    def reinit(self, options: Options) -> None:
        """Sums the statistics of the members whose types are accounted."""
        proto = self.proto
        proto.Clear()
        proto.name = self.name
        self.accounted = []
        for member in self.members:
            member.account = re_account(member, options)
            if member.account:
                member.reset_totals()
                member.add_self_to_totals()
                self.accounted.append(member)
        for key in SUMMED:
            setattr(proto, key, sum(getattr(m.proto, key) for m in self.accounted))
        for member in sort_nodes(self.accounted, options):
            proto.graph_nodes.add().CopyFrom(member.proto)

    @property
    def stats(self) -> Any:
        """The group's sums under ``GraphNodeProto`` field names."""
        return _Stats(self)


class _Stats:
    """A group's own sums under the ``GraphNodeProto`` field names the display rules read."""

    def __init__(self, group: GroupNode) -> None:
        p = group.proto
        for key in SUMMED:
            setattr(self, key, getattr(p, key))
            setattr(self, f"total_{key}", getattr(p, key))
        self.run_count = self.total_run_count = sum(m.proto.run_count for m in group.accounted)


class _Sortable:
    def __init__(self, group: GroupNode) -> None:
        self.name = group.name
        self.group = group
        self.proto = group.stats


def _label(trace: str) -> str:
    filename, _, line = trace.rpartition(":")
    source = linecache.getline(filename, int(line)).strip() if line.isdigit() else ""
    return f"{os.path.basename(filename)}:{line}:{source}" if source else f"{os.path.basename(filename)}:{line}"


def _groups(model: ProfileModel, cmd: str) -> dict[str, list[ProfileNode]]:
    groups: dict[str, list[ProfileNode]] = defaultdict(list)
    for node in model.nodes.values():
        if cmd == "op":
            groups[node.op_type].append(node)
        elif node.trace:
            groups[_label(node.trace)].append(node)
    return groups


def group_view(model: ProfileModel, cmd: str, options: Options) -> tuple[Any, list[GroupNode]]:
    """The ``MultiGraphNodeProto`` of the ``op`` or ``code`` view, and its shown groups in
    display order."""
    groups = [GroupNode(name, members) for name, members in _groups(model, cmd).items()]
    for group in groups:
        group.reinit(options)
    accounted = [g for g in groups if g.accounted]
    ordered = [s.group for s in sort_nodes([_Sortable(g) for g in accounted], options)]
    shown = [g for depth, g in enumerate(ordered, start=1) if should_show(_Sortable(g), options, depth)]
    counted = shown if options.account_displayed_op_only else accounted
    root = MultiGraphNodeProto(name=ROOT_NAME)
    for key in SUMMED:
        setattr(root, f"total_{key}", sum(getattr(g.proto, key) for g in counted))
    if cmd == "code":  # call sites side by side (tfprof: the call-stack tree)
        for group in shown:
            child = root.children.add()
            child.CopyFrom(group.proto)
            for key in SUMMED:
                setattr(child, f"total_{key}", getattr(child, key))
        return root, shown
    chain = None
    for group in reversed(shown):  # each group's child is the next one; totals run to the end
        proto = MultiGraphNodeProto()
        proto.CopyFrom(group.proto)
        for key in SUMMED:
            setattr(proto, f"total_{key}", getattr(proto, key) + (getattr(chain, f"total_{key}") if chain else 0))
        if chain is not None:
            proto.children.add().CopyFrom(chain)
        chain = proto
    if chain is not None:
        root.children.add().CopyFrom(chain)
    return root, shown
