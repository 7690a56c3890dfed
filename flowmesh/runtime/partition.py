"""Splits a placed step into one partition per device, with Send/Recv on every cut edge.

Each partition is an ordered list of items, a subsequence of the step's global
topological order:

* :class:`OpItem` runs a graph op;
* :class:`SendItem` follows the producer of a tensor consumed on another device (one Send
  per tensor per destination device);
* :class:`RecvItem` precedes the first consumer of a remote tensor on its device.

Control edges crossing devices become Send/Recv of an empty control token, so ``X``
with a control input on another device waits for it. Because every partition keeps the
global order and Sends directly follow their producers, partitions running concurrently
cannot deadlock.

Partitions are plain descriptions: the local executor lowers them to programs, the
distributed master serializes them and ships them to the owning task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.runtime.device import Device


@dataclass(frozen=True)
class EdgeKey:
    """Names one cut edge: a tensor (or a control token) from one device to another."""

    tensor_name: str
    src_device: str
    dst_device: str
    control: bool = False

    def __str__(self) -> str:
        kind = "^" if self.control else ""
        return f"{self.src_device};{kind}{self.tensor_name};{self.dst_device}"


@dataclass
class OpItem:
    op: Operation


@dataclass
class SendItem:
    key: EdgeKey
    value: Any  # the Tensor sent, or the Operation for a control token


@dataclass
class RecvItem:
    key: EdgeKey
    value: Any  # the Tensor received (its key in this partition), or the control token


@dataclass
class Partition:
    device: Device
    items: list[Any] = field(default_factory=list)
    feeds: list[Tensor] = field(default_factory=list)
    fetches: list[Tensor] = field(default_factory=list)


class ControlToken:
    """The value key of a received control edge (a distinct object per edge)."""

    __slots__ = ("key",)

    def __init__(self, key: EdgeKey):
        self.key = key

    def __repr__(self) -> str:
        return f"<control {self.key}>"


def partition(
    ops: Sequence[Operation],
    placement: dict[Operation, Device],
    feeds: Sequence[Tensor],
    fetches: Sequence[Tensor],
) -> dict[Device, Partition]:
    """Builds per-device partitions for ops in topological order.

    Args:
        ops: the step's ops in topological order.
        placement: the device of every op (from the placer).
        feeds: fed tensors; each is fed directly to every partition that reads it.
        fetches: fetched tensors; each is returned by the partition producing it.

    Returns:
        Device -> partition, in order of first use.
    """
    fed = set(feeds)
    builder = _Builder(placement, fed)
    for op in ops:
        builder.add_op(op)
    for t in fetches:
        if t not in fed:
            builder.part(placement[t.op]).fetches.append(t)
    return builder.finish()


class _Builder:
    """Accumulates partition items; Sends are attached to their producer and emitted
    right after it when the partitions are finished."""

    def __init__(self, placement: dict[Operation, Device], fed: set[Tensor]):
        self.placement = placement
        self.fed = fed
        self.parts: dict[Device, Partition] = {}
        self.available: dict[tuple[Any, Device], Any] = {}  # (tensor or op, device) -> key
        self.sends_after: dict[Operation, list[SendItem]] = {}

    def part(self, device: Device) -> Partition:
        p = self.parts.get(device)
        if p is None:
            p = self.parts[device] = Partition(device)
        return p

    def add_op(self, op: Operation) -> None:
        device = self.placement[op]
        p = self.part(device)
        for t in op.inputs:
            self._make_available(t, device, p)
        for control in op.control_inputs:
            self._control_edge(control, device, p)
        p.items.append(OpItem(op))
        for t in op.outputs:
            self.available[(t, device)] = t

    def _make_available(self, tensor: Tensor, device: Device, p: Partition) -> None:
        if (tensor, device) in self.available:
            return
        self.available[(tensor, device)] = tensor
        if tensor in self.fed:
            p.feeds.append(tensor)
            return
        src = self.placement[tensor.op]
        key = EdgeKey(tensor.name, src.name, device.name)
        self.sends_after.setdefault(tensor.op, []).append(SendItem(key, tensor))
        p.items.append(RecvItem(key, tensor))

    def _control_edge(self, control: Operation, device: Device, p: Partition) -> None:
        src = self.placement.get(control)
        if src is None or src is device or (control, device) in self.available:
            return
        key = EdgeKey(control.name, src.name, device.name, control=True)
        self.sends_after.setdefault(control, []).append(SendItem(key, control))
        token = ControlToken(key)
        p.items.append(RecvItem(key, token))
        self.available[(control, device)] = token

    def finish(self) -> dict[Device, Partition]:
        for p in self.parts.values():
            items: list[Any] = []
            for item in p.items:
                items.append(item)
                if isinstance(item, OpItem):
                    items.extend(self.sends_after.get(item.op, ()))
            p.items = items
        return self.parts


def cut_edges(parts: dict[Device, Partition]) -> list[EdgeKey]:
    """Every Send/Recv edge of a partitioned step (for tests, tracing and debugging)."""
    return [item.key for p in parts.values() for item in p.items if isinstance(item, SendItem)]


def partition_graph_def(part: Partition) -> dict[str, Any]:
    """A readable description of one partition (``RunMetadata.partition_graphs``): the
    device and its nodes in execution order, Send/Recv included, as ``node_def`` dicts."""
    nodes = []
    for item in part.items:
        if isinstance(item, OpItem):
            node = dict(item.op.node_dict)
            node["device"] = part.device.name
        else:
            send = isinstance(item, SendItem)
            value = item.value
            inputs = [value.name] if send and isinstance(value, Tensor) else (
                [f"^{value.name}"] if send else [])
            node = {
                "name": f"{'_send' if send else '_recv'}/{item.key}", "op": "_Send" if send else "_Recv",
                "input": inputs, "device": part.device.name,
                "attr": {"tensor_name": item.key.tensor_name, "send_device": item.key.src_device,
                         "recv_device": item.key.dst_device, "control": item.key.control},
            }
        nodes.append(node)
    return {"device": part.device.name, "node": nodes,
            "feeds": [t.name for t in part.feeds], "fetches": [t.name for t in part.fetches]}
