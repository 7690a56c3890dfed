"""One task's share of a distributed step: its partitions, shipped, lowered and run.

The master cuts a step into per-device partitions (``runtime/partition.py``) and sends
each task the partitions of its devices in a compact form that names graph elements::

    {"device": "/job:ps/replica:0/task:0/device:CPU:0",
     "items": [["op", "w"], ["send", [tensor, src, dst, control], "w/read:0"],
               ["recv", [tensor, src, dst, control], "grad:0" | None]],
     "feeds": ["x:0"], "fetches": ["loss:0"]}

together with the ops those items need (``core/serialize.py`` subset with stubs). The
worker rebuilds :class:`~flowmesh.runtime.partition.Partition` objects over its copy of
the graph and runs them with the local session's
:class:`~flowmesh.runtime.partition_runner.PartitionRunner`. The only distributed part is
:func:`remote_sends`: a Send whose destination is another task pushes the value over the
data plane to that task's rendezvous; every other Send and every Recv use the step's
local rendezvous (pushed tensors are delivered into it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.kernel_cache import KernelCache
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime.device import DeviceSet
from flowmesh.runtime.partition import ControlToken, EdgeKey, OpItem, Partition, RecvItem, SendItem
from flowmesh.runtime.partition_runner import PartitionRunner, RemoteSends


def task_of(device_name: str) -> str:
    """``/job:ps/replica:0/task:0`` for any device name of that task."""
    spec = DeviceSpec.from_string(device_name)
    return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task}"


def key_fields(key: EdgeKey) -> list[Any]:
    return [key.tensor_name, key.src_device, key.dst_device, key.control]


def key_from_fields(fields: Sequence[Any]) -> EdgeKey:
    """The EdgeKey of a wire key (validated: it comes from the network)."""
    if (len(fields) != 4 or not all(isinstance(f, str) for f in fields[:3])
            or not isinstance(fields[3], bool)):
        raise InvalidArgumentError(None, None, f"Malformed edge key {list(fields)!r:.200}")
    return EdgeKey(fields[0], fields[1], fields[2], fields[3])


# --- wire form of partitions -------------------------------------------------------------
def describe_partition(part: Partition) -> dict[str, Any]:
    """The wire form of a partition (graph elements by name)."""
    items: list[list[Any]] = []
    for item in part.items:
        if isinstance(item, OpItem):
            items.append(["op", item.op.name])
        elif isinstance(item, SendItem):
            value = item.value.name if isinstance(item.value, (Tensor, Operation)) else None
            items.append(["send", key_fields(item.key), value])
        else:
            value = item.value.name if isinstance(item.value, Tensor) else None
            items.append(["recv", key_fields(item.key), value])
    return {"device": part.device.name, "items": items,
            "feeds": [t.name for t in part.feeds], "fetches": [t.name for t in part.fetches]}


def rebuild_partition(desc: Any, graph: Graph, devices: DeviceSet) -> Partition:
    """The Partition a :func:`describe_partition` dict names, over ``graph``.

    Raises:
        InvalidArgumentError: unknown device, graph element or item kind.
    """
    if not isinstance(desc, dict):
        raise InvalidArgumentError(None, None, "A partition description must be a map")
    device = devices.get(desc.get("device")) if isinstance(desc.get("device"), str) else None
    if device is None:
        raise InvalidArgumentError(
            None, None,
            f"Partition for device {desc.get('device')!r} sent to a task whose devices are "
            f"[{', '.join(devices.names())}]",
        )
    part = Partition(device)
    for item in _list(desc, "items"):
        part.items.append(_rebuild_item(item, graph))
    part.feeds = [_tensor(graph, name) for name in _list(desc, "feeds")]
    part.fetches = [_tensor(graph, name) for name in _list(desc, "fetches")]
    return part


def _rebuild_item(item: Any, graph: Graph) -> Any:
    if not isinstance(item, list) or not item or item[0] not in ("op", "send", "recv"):
        raise InvalidArgumentError(None, None, f"Malformed partition item {item!r:.200}")
    if item[0] == "op":
        return OpItem(_op(graph, item[1]))
    key = key_from_fields(item[1] if isinstance(item[1], list) else [])
    if item[0] == "send":
        value = _op(graph, key.tensor_name) if key.control else _tensor(graph, item[2])
        return SendItem(key, value)
    return RecvItem(key, ControlToken(key) if key.control else _tensor(graph, item[2]))


def _list(desc: dict[str, Any], field: str) -> list[Any]:
    value = desc.get(field)
    if not isinstance(value, list):
        raise InvalidArgumentError(None, None, f"Partition field '{field}' must be a list")
    return value


def _tensor(graph: Graph, name: Any) -> Tensor:
    try:
        return graph.get_tensor_by_name(name)
    except (KeyError, ValueError, TypeError):
        raise InvalidArgumentError(None, None, f"Partition names unknown tensor {name!r:.200}") from None


def _op(graph: Graph, name: Any) -> Operation:
    try:
        return graph.get_operation_by_name(name)
    except (KeyError, ValueError, TypeError):
        raise InvalidArgumentError(None, None, f"Partition names unknown op {name!r:.200}") from None


# --- lowering ------------------------------------------------------------------------------
RemoteSend = Callable[[str, int, EdgeKey, Any], None]


def remote_sends(my_task: str, send: RemoteSend) -> RemoteSends:
    """The runner's seam for a worker: a Send to another task calls
    ``send(task, step_id, key, value)`` (the data plane); every other Send is local."""

    def for_key(key: EdgeKey) -> Callable[[int, Any], None] | None:
        task = task_of(key.dst_device)
        if task == my_task:
            return None
        return lambda step_id, value: send(task, step_id, key, value)

    return for_key


class TaskGraph:
    """The lowered partitions of one task for one step signature (a registered graph).

    Attributes:
        feed_names / fetch_names: the order of RunGraph's feed and result lists.
        peers: tasks this graph receives from (their loss aborts the step).
    """

    def __init__(self, parts: list[Partition], kernels: KernelCache, my_task: str,
                 remote_send: RemoteSend, feed_names: list[str], fetch_names: list[str],
                 pool: ThreadPoolExecutor | None = None):
        feed_index = {name: i for i, name in enumerate(feed_names)}
        self.runner = PartitionRunner(
            parts, kernels, {t: feed_index[t.name] for p in parts for t in p.feeds},
            remote_sends(my_task, remote_send), pool)
        self.feed_names = feed_names
        self.fetch_names = fetch_names
        self.peers = {task_of(item.key.src_device) for p in parts for item in p.items
                      if isinstance(item, RecvItem)} - {my_task}
        where = {t.name: at for t, at in self.runner.produced.items()}
        missing = [name for name in fetch_names if name not in where]
        if missing:
            raise InvalidArgumentError(None, None, f"Registered graph never produces {missing}")
        self._fetch_from = [where[name] for name in fetch_names]

    def run(self, step: StepContext, feeds: Sequence[Any]) -> list[Any]:
        """Runs every partition (concurrently when there are several); returns fetches."""
        results = self.runner.run(feeds, step)
        return [results[pi][fi] for pi, fi in self._fetch_from]
