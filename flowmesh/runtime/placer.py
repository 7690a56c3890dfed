"""The placer: assigns every op of a step to one device of a :class:`DeviceSet`.

Rules, in order (TensorFlow's placer, simplified where noted):

1. **Colocation groups.** Ops sharing a ``tf.colocate_with`` group (``loc:@name``) share
   a device, and so do ops connected by a resource edge: an op consuming a variable
   handle runs where the variable lives (reads, assigns, optimizer updates, gathers).
2. **Merged request.** The ``tf.device`` requests of a group's members are merged.
   When the variable (``VarHandleOp``, or a colocation target outside the step) has a
   request, the requests of ops consuming its handle are ignored: a read created under
   another device scope runs with the variable (TensorFlow ignores them on conflict).
   Other conflicts are an ``InvalidArgumentError`` ("Cannot colocate nodes ..."); with
   ``allow_soft_placement`` a conflicting device type/index is dropped instead. A
   job/replica/task conflict is always an error.
3. **Pinned devices.** A stateful op (variables, random generators, queues) keeps the
   device it got in the first step of the session (``pinned``), so its state is found
   again in every later step.
4. **Device choice.** The request is completed with the session's default job/task
   (when it names no job) and restricted to device types every member's kernel supports
   (host-only ops: ``py_func``, datasets, string compute ops run on CPU). Among the
   matching devices the highest-priority type wins (GPU before CPU), then set order.
5. **Soft placement.** Nothing matching: with ``allow_soft_placement`` the device type
   and index are dropped (job, replica and task are kept); otherwise an
   ``InvalidArgumentError`` "Cannot assign a device for operation ..." lists the
   available devices. Unlike TensorFlow, a single-task (local) session with soft
   placement also maps requests for other jobs/tasks to its own task.
6. **Heuristics** (ops alone in their group, within the devices their request allows): ``Shape``/``Size``/
   ``Rank`` go with their input; a generator (no inputs, one output, e.g. a constant)
   goes with its consumers when they all share one allowed device.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from flowmesh import config as _config
from flowmesh.core import dtypes, registry
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Operation
from flowmesh.errors import InvalidArgumentError, NotFoundError
from flowmesh.kernels.contract.registry import kernel_device_types
from flowmesh.runtime.device import Device, DeviceSet

# Op types TensorFlow runs on the host only (besides kernels registered with
# device_types=("CPU",)): Python callbacks and the input pipeline.
HOST_ONLY_OP_TYPES = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc", "NumpyFunction"})
_HOST_ONLY_PATTERN = re.compile(r"Dataset|Iterator")
# Type-agnostic ops that may carry strings on any device (host memory, like TensorFlow's
# HostMemory kernels); any other op reading or producing strings is host-only.
STRING_PASSTHROUGH_OP_TYPES = frozenset({
    "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "NoOp",
    "StopGradient", "Snapshot", "_Send", "_Recv",
})
METADATA_OP_TYPES = frozenset({"Shape", "ShapeN", "Size", "Rank"})


@dataclass
class _Group:
    """One colocation group of a step."""

    members: list[Operation]
    anchors: list[Operation] = field(default_factory=list)  # colocation targets outside the step


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Operation, Operation] = {}

    def find(self, op: Operation) -> Operation:
        root = op
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while op is not root:  # path compression
            nxt = self.parent.get(op, op)
            self.parent[op] = root
            op = nxt
        return root

    def union(self, a: Operation, b: Operation) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            if rb._id < ra._id:  # the oldest op is the root: stable group order
                ra, rb = rb, ra
            self.parent[rb] = ra


def colocation_groups(ops: Sequence[Operation]) -> dict[Operation, list[Operation]]:
    """Groups ops that must share a device. Returns root -> members (in op order)."""
    return {root: g.members for root, g in _build_groups(ops).items()}


def _build_groups(ops: Sequence[Operation]) -> dict[Operation, _Group]:
    uf = _UnionFind()
    in_step = set(ops)
    by_group_name: dict[str, Operation] = {}
    for op in ops:
        for group_name in op._colocation:
            anchor = by_group_name.setdefault(group_name, op)
            uf.union(op, anchor)
            target = _lookup(op, group_name)
            if target is not None and target in in_step:
                uf.union(op, target)
        for t in op.inputs:
            if t.dtype == dtypes.resource and t.op in in_step:
                uf.union(op, t.op)
    groups: dict[Operation, _Group] = {}
    for op in ops:
        groups.setdefault(uf.find(op), _Group([])).members.append(op)
    for name, op in by_group_name.items():
        target = _lookup(op, name)
        group = groups[uf.find(op)]
        if target is not None and target not in in_step and target not in group.anchors:
            group.anchors.append(target)
    return groups


def _lookup(op: Operation, name: str) -> Operation | None:
    return op.graph._nodes_by_name.get(name)


def place(
    ops: Sequence[Operation],
    devices: DeviceSet,
    *,
    default_job: str,
    default_task: int,
    allow_soft_placement: bool = False,
    pinned: dict[Operation, Device] | None = None,
) -> dict[Operation, Device]:
    """Returns the device of every op in ``ops`` (a topologically ordered step).

    Args:
        ops: the step's ops, in topological order.
        devices: where ops may go (may hold devices of several tasks).
        default_job, default_task: fill requests that name no job (the session's task).
        allow_soft_placement: fall back when a request cannot be met.
        pinned: devices of stateful ops from earlier steps of the session; updated with
            this step's stateful ops.

    Raises:
        InvalidArgumentError: a request names no available device (and soft placement is
            off), or a colocation group has conflicting requests.
    """
    pinned = pinned if pinned is not None else {}
    placement: dict[Operation, Device] = {}
    default_spec = DeviceSpec(job=default_job, task=default_task)
    deferred: list[tuple[Operation, list[Device]]] = []
    for group in _build_groups(ops).values():
        request = _merged_request(group, allow_soft_placement, devices)
        allowed = _allowed_devices(group, request, devices, default_spec, allow_soft_placement, pinned)
        device = _heuristic_device(group, allowed, placement, deferred)
        if device is None:
            continue
        for op in group.members:
            placement[op] = device
    for op, allowed in deferred:  # generators go with their consumers
        consumers = {placement[c] for c in _consumers(op) if c in placement}
        only = next(iter(consumers)) if len(consumers) == 1 else None
        placement[op] = only if only is not None and only in allowed else allowed[0]
    for op, device in placement.items():
        if op not in pinned and _is_stateful(op):
            pinned[op] = device
    _config.debug(1, f"placed {len(placement)} ops on {len(set(placement.values()))} devices")
    return placement


def _is_stateful(op: Operation) -> bool:
    try:
        return registry.get_op_def(op.type).stateful
    except NotFoundError:  # ops of another process's registry (distributed master)
        return False


def _consumers(op: Operation) -> list[Operation]:
    out = [c for t in op.outputs for c in t.consumers()]
    return out + list(op._control_outputs)


def _heuristic_device(group: _Group, allowed: list[Device],
                      placement: dict[Operation, Device],
                      deferred: list[tuple[Operation, list[Device]]]) -> Device | None:
    """The device for ``group``; ``None`` when the group is deferred to the second pass."""
    if len(group.members) != 1 or group.anchors:
        return allowed[0]
    op = group.members[0]
    if op.type in METADATA_OP_TYPES and op.inputs:
        source = placement.get(op.inputs[0].op)
        if source is not None and source in allowed:
            return source
    if not op.inputs and not op._control_inputs and len(op.outputs) == 1 and \
            op.outputs[0].dtype != dtypes.resource and _consumers(op):
        deferred.append((op, allowed))
        return None
    return allowed[0]


# --- requests ----------------------------------------------------------------------------
def _merged_request(group: _Group, soft: bool, devices: DeviceSet) -> DeviceSpec:
    """Merges the requests of a group (resource producers and anchors first)."""
    first = group.anchors + [op for op in group.members if _produces_resource_only(op)]
    ordered = first + [op for op in group.members if op not in first]
    resource_requested = any(op.device for op in first)
    merged = DeviceSpec()
    owner: Operation | None = None
    for op in ordered:
        if not op.device:
            continue
        if resource_requested and op not in first and _consumes_resource(op):
            _config.debug(2, f"Ignoring device specification {op.device} for node '{op.name}' "
                             f"because its resource input is placed by {merged}")
            continue
        spec = DeviceSpec.from_string(op.device)
        if merged.is_compatible_with(spec):
            merged, owner = merged.fill_unset_from(spec), owner or op
            continue
        if soft and _same_task(merged, spec):
            merged = merged.replace(device_type=None, device_index=None)
            continue
        raise _colocation_error(op, owner, spec, merged, devices)
    return merged


def _produces_resource_only(op: Operation) -> bool:
    return not _consumes_resource(op) and any(t.dtype == dtypes.resource for t in op.outputs)


def _consumes_resource(op: Operation) -> bool:
    return any(t.dtype == dtypes.resource for t in op.inputs)


def _same_task(a: DeviceSpec, b: DeviceSpec) -> bool:
    return a.replace(device_type=None, device_index=None).is_compatible_with(
        b.replace(device_type=None, device_index=None))


def _colocation_error(op: Operation, owner: Operation | None, spec: DeviceSpec,
                      merged: DeviceSpec, devices: DeviceSet) -> InvalidArgumentError:
    other = owner.name if owner is not None else "?"
    why = "incompatible types" if spec.device_type != merged.device_type else "incompatible devices"
    return InvalidArgumentError(
        op.name, op,
        f"Cannot colocate nodes '{op.name}' and '{other}': Cannot merge devices with {why}: "
        f"'{spec}' and '{merged}'. They must share a device (tf.colocate_with or a variable "
        f"they both use) but request different ones.\nAvailable devices: "
        f"[{', '.join(devices.names())}].\nRemove one of the conflicting tf.device requests"
        + (" (or set ConfigProto(allow_soft_placement=True))." if _same_task(spec, merged) else "."),
    )


# --- device choice -----------------------------------------------------------------------
def supported_device_types(op: Operation) -> frozenset[str] | None:
    """Device types ``op``'s kernel runs on; ``None`` means every type."""
    types = kernel_device_types(op.type)
    if types is not None:
        return types
    if op.type in HOST_ONLY_OP_TYPES or _HOST_ONLY_PATTERN.search(op.type):
        return frozenset({"CPU"})
    if op.type not in STRING_PASSTHROUGH_OP_TYPES and (
        any(t.dtype == dtypes.string for t in op.outputs)
        or any(t.dtype == dtypes.string for t in op.inputs)
    ):
        return frozenset({"CPU"})
    return None


def _group_types(group: _Group) -> tuple[frozenset[str] | None, Operation | None]:
    types: frozenset[str] | None = None
    limiting: Operation | None = None
    for op in group.members:
        op_types = supported_device_types(op)
        if op_types is not None:
            types = op_types if types is None else types & op_types
            limiting = limiting or op
    return types, limiting


def _allowed_devices(group: _Group, request: DeviceSpec, devices: DeviceSet,
                     default_spec: DeviceSpec, soft: bool,
                     pinned: dict[Operation, Device]) -> list[Device]:
    """The devices the group may go to, best first (never empty)."""
    for op in group.anchors + group.members:
        kept = devices.get(pinned[op].name) if op in pinned else None
        if kept is not None:
            return [kept]
    full = request.fill_unset_from(default_spec) if request.job is None else request
    types, limiting = _group_types(group)
    candidates = _prioritized(devices.matching(full), types)
    if candidates:
        return candidates
    if soft:
        for relaxed_spec in _soft_specs(full, devices, default_spec):
            relaxed = _prioritized(devices.matching(relaxed_spec), types)
            if relaxed:
                return relaxed
    raise _assign_error(group, request, full, devices, types, limiting, soft)


def _soft_specs(full: DeviceSpec, devices: DeviceSet, default_spec: DeviceSpec) -> list[DeviceSpec]:
    """Fallback requests under soft placement: drop the device type and index (keeping
    job, replica and task, as TensorFlow does). In a single-task session (a local one) a
    request for another job or task also falls back to the local task, so a graph built
    for a cluster runs locally; a multi-task set keeps TensorFlow's error there."""
    specs = [full.replace(device_type=None, device_index=None)]
    if len({d.task_name for d in devices}) == 1:
        local = full.replace(job=default_spec.job, replica=None, task=default_spec.task)
        specs += [local, local.replace(device_type=None, device_index=None)]
    return specs


def _prioritized(candidates: list[Device], types: frozenset[str] | None) -> list[Device]:
    if types is not None:
        candidates = [d for d in candidates if d.device_type in types]
    order = {id(d): i for i, d in enumerate(candidates)}
    return sorted(candidates, key=lambda d: (-d.priority, order[id(d)]))


def _assign_error(group: _Group, request: DeviceSpec, full: DeviceSpec, devices: DeviceSet,
                  types: frozenset[str] | None, limiting: Operation | None,
                  soft: bool) -> InvalidArgumentError:
    op = next((m for m in group.members if m.device), group.members[0])
    available = f"[{', '.join(devices.names())}]"
    shown = request.to_string() or "(none)"
    if devices.matching(full) and types is not None and limiting is not None:
        reason = (
            f"Could not satisfy explicit device specification '{shown}' because no supported "
            f"kernel for {full.device_type} devices is available: {limiting.type} node "
            f"'{limiting.name}' runs on {', '.join(sorted(types))} only."
        )
    else:
        reason = (
            f"Operation was explicitly assigned to {shown} but available devices are "
            f"{available}. Make sure the device specification refers to a valid device."
        )
    others = [m.name for m in group.members if m is not op][:5]
    colocated = f"\nColocated with: {', '.join(others)}." if others else ""
    fix = "" if soft else " or set ConfigProto(allow_soft_placement=True) to fall back"
    return InvalidArgumentError(
        op.name, op,
        f"Cannot assign a device for operation {op.name}: {reason}{colocated}\n"
        f"Available devices: {available}.\nUse a listed device{fix}.",
    )


def log_placement(placement: dict[Operation, Device], already_logged: set[Operation]) -> None:
    """Prints ``name: (OpType): device`` once per op (``log_device_placement=True``)."""
    lines = []
    for op, device in sorted(placement.items(), key=lambda item: item[0]._id):
        if op in already_logged:
            continue
        already_logged.add(op)
        lines.append(f"{op.name}: ({op.type}): {device.name}")
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
