"""Lane batching: runs of the same small ops, one per variable, become one node.

A graph built by a loop over variables (a loss term, a weight decay or a norm per
variable) and its gradients hold the same few ops once per variable, one after another:
``Mul_0, Square_0, Sum_0, Mul_1, Square_1, Sum_1, ...``. Each is a kernel call on a tiny
tensor, so such a step is thousands of calls' overhead and little arithmetic.

:func:`batch_lanes` finds *runs*: contiguous blocks of ``lanes x period`` nodes in which
every lane repeats lane 0's ops (same op types, attrs, dtypes and static shapes), reads
either its own earlier values or values from before the run, and never another lane's.
Position ``j`` of every lane is *slot* ``j``. The run becomes one node that computes slot
by slot for all lanes at once (``flowmesh/kernels/lane_ops.py``): a value that differs
between lanes is one tensor stacked along a new first axis, a value that is the same in
every lane (same inputs, or equal constants) is computed once. The node stands where the
run stood, so its order against every other node is unchanged; only the order of ops
within the run changes, and those are pure ops and variable reads (no op in a run writes).

A later run that reads a slot lane by lane takes the stacked tensor itself, and an
``AddN`` of a whole slot becomes one sum over the lane axis; other readers get per-lane
views. The node has no graph op, so buffer forwarding never writes into those views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from flowmesh import config
from flowmesh.kernels import lane_ops

MIN_LANES = 8
MAX_PERIOD = 32
_LIST_ONLY = frozenset({"VarHandleOp"})
_CONST = "Const"


@dataclasses.dataclass(frozen=True)
class StackKey:
    """The value key of a slot's stacked tensor (lanes first)."""

    run: int
    slot: int


@dataclasses.dataclass
class _Source:
    """Where one input of a slot comes from."""

    kind: str  # "slot": this lane's slot ``slot``; "shared": one key; "varying": a key per lane
    slot: int = -1
    keys: list[Hashable] = dataclasses.field(default_factory=list)
    link: StackKey | None = None  # a varying input read as an earlier run's stacked slot


@dataclasses.dataclass
class _Slot:
    nodes: list[Any]
    sources: list[_Source]
    mode: str = ""  # "list", "shared", "const", "read", "stacked"
    value: Any = None  # "const": the stacked constants


@dataclasses.dataclass
class _Run:
    index: int
    start: int
    period: int
    lanes: int
    slots: list[_Slot] = dataclasses.field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.lanes * self.period


def batch_lanes(nodes: Sequence[Any], fetch_keys: Sequence[Hashable]) -> list[Any]:
    """Returns ``nodes`` with every run of :data:`MIN_LANES` or more lanes as one node.

    Args:
        nodes: a program's ExecNodes in execution order (not modified).
        fetch_keys: values the program returns (kept as per-lane values).
    """
    if not config.LANES.get():
        return list(nodes)
    runs = _find_runs(nodes)
    where = _where(runs)
    sums = _link(runs, nodes, where)
    linked = {key.run for key in _stack_reads(runs, sums)}
    kept = [run for run in runs if not _only_reads(run) or run.index in linked]
    if len(kept) != len(runs):  # reads nobody takes stacked: cheaper as they were
        runs = kept
        where = _where(runs)
        sums = {i: node for i, node in sums.items() if where.get(nodes[i].inputs[0], (None,))[0] in runs}
    if not runs:
        return list(nodes)
    needed = _needed_outside(runs, nodes, where, sums, set(fetch_keys))
    out: list[Any] = []
    i = 0
    for run in runs:
        out.extend(sums.get(k, nodes[k]) for k in range(i, run.start))
        out.append(_fused_node(run, needed))
        i = run.end
    out.extend(sums.get(k, nodes[k]) for k in range(i, len(nodes)))
    return out


def _where(runs: list[_Run]) -> dict[Hashable, tuple[_Run, int, int]]:
    """Each value a run computes -> (run, slot, lane)."""
    return {node.outputs[0]: (run, j, m) for run in runs for j, slot in enumerate(run.slots)
            for m, node in enumerate(slot.nodes)}


def _stack_reads(runs: list[_Run], sums: dict[int, Any]) -> list[StackKey]:
    keys = [s.link for run in runs for slot in run.slots for s in slot.sources if s.link is not None]
    return keys + [node.inputs[0] for node in sums.values()]


# --- finding runs ------------------------------------------------------------------------------
_KINDS = lane_ops.LIFTABLE | _LIST_ONLY | {_CONST}


def _signature(node: Any) -> Hashable | None:
    op = node.op
    if op is None or op.type not in _KINDS or node.needs_step or len(node.outputs) != 1 or op.control_inputs:
        return None
    if op.type in _LIST_ONLY:
        return (op.type,)
    if op.type == _CONST:
        if op.outputs[0].dtype.name not in lane_ops.NUMERIC:
            return None
    elif not lane_ops.can_lift(op):
        return None
    tensors = [t for t in (*op.inputs, *op.outputs) if t.dtype.name != "resource"]
    dims = tuple(t.shape.as_tuple() for t in tensors)
    if any(d is None or None in d for d in dims):
        return None
    attrs = tuple(sorted((k, _hashable(v)) for k, v in op.attrs.items()
                         if not k.startswith("_") and not (op.type == _CONST and k == "value")))
    return op.type, attrs, tuple(t.dtype for t in tensors), dims


def _hashable(value: Any) -> Hashable:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _find_runs(nodes: Sequence[Any]) -> list[_Run]:
    ids: dict[Hashable, int] = {}
    sig = [None if (s := _signature(n)) is None else ids.setdefault(s, len(ids)) for n in nodes]
    runs: list[_Run] = []
    i = 0
    while i < len(nodes):
        candidates: list[tuple[int, int, int]] = []
        if sig[i] is not None:
            for period in range(1, MAX_PERIOD + 1):
                if i + period * MIN_LANES > len(nodes):
                    break
                if sig[i + period] != sig[i] or any(period % c[2] == 0 for c in candidates):
                    continue  # a multiple of a period that repeats covers no more
                lanes = _grow(nodes, sig, i, period)
                if lanes >= MIN_LANES:
                    candidates.append((lanes * period, lanes, period))
        run = None
        for _, lanes, period in sorted(candidates, reverse=True):
            run = _make_run(nodes, len(runs), i, lanes, period)
            if run is not None:
                break
        if run is not None:
            runs.append(run)
            i = run.end
        elif candidates:  # no run starts in the first lanes of a block that repeats but computes nothing
            _, lanes, period = max(candidates)
            i += (lanes - 1) * period
        else:
            i += 1
    return runs


def _grow(nodes: Sequence[Any], sig: list[int | None], start: int, period: int) -> int:
    """How many consecutive lanes from ``start`` repeat lane 0 without reading each other."""
    if any(sig[start + j] is None for j in range(period)):
        return 0
    produced = {id(nodes[start + j].outputs[0]): (0, j) for j in range(period)}
    template = [[produced.get(id(k), (None, None))[1] for k in nodes[start + j].inputs] for j in range(period)]
    lanes = 1
    while start + (lanes + 1) * period <= len(nodes):
        base = start + lanes * period
        for j in range(period):
            node = nodes[base + j]
            if sig[base + j] != sig[start + j] or len(node.inputs) != len(template[j]):
                return lanes
            for key, slot in zip(node.inputs, template[j]):
                if produced.get(id(key)) != (None if slot is None else (lanes, slot)):
                    return lanes
            produced[id(node.outputs[0])] = (lanes, j)
        lanes += 1
    return lanes


def _make_run(nodes: Sequence[Any], index: int, start: int, lanes: int, period: int) -> _Run | None:
    run = _Run(index, start, period, lanes)
    lane0 = {nodes[start + j].outputs[0]: j for j in range(period)}
    for j in range(period):
        members = [nodes[start + m * period + j] for m in range(lanes)]
        sources = []
        for k, key in enumerate(members[0].inputs):
            if key in lane0:
                sources.append(_Source("slot", slot=lane0[key]))
                continue
            keys = [n.inputs[k] for n in members]
            shared = all(key_m is keys[0] for key_m in keys)
            sources.append(_Source("shared", keys=keys[:1]) if shared else _Source("varying", keys=keys))
        run.slots.append(_Slot(members, sources))
    for slot in run.slots:
        if not _choose_mode(run, slot):
            return None
    return run if any(_computes(s) for s in run.slots) else None


def _computes(slot: _Slot) -> bool:
    """Whether batching the slot saves kernel calls (constants and handles alone do not)."""
    return slot.mode in ("stacked", "read") or (slot.mode == "shared" and slot.nodes[0].op.type != _CONST)


def _only_reads(run: _Run) -> bool:
    return not any(s.mode == "stacked" or (_computes(s) and s.mode != "read") for s in run.slots)


def _choose_mode(run: _Run, slot: _Slot) -> bool:
    op = slot.nodes[0].op
    if op.type in _LIST_ONLY:
        slot.mode = "list"
        return True
    if op.type == _CONST:
        values = [n.op.attrs["value"] for n in slot.nodes]
        if all(np.array_equal(v, values[0]) for v in values):
            slot.mode = "shared"
        else:
            slot.mode, slot.value = "const", None
        return True
    modes = [run.slots[s.slot].mode if s.kind == "slot" else s.kind for s in slot.sources]
    if all(m == "shared" for m in modes):
        slot.mode = "shared"
        return True
    if op.type == lane_ops.READ:
        slot.mode = "read"
        return True
    slot.mode = "stacked"
    return "list" not in modes


# --- linking runs to their readers -------------------------------------------------------------
def _lane_keys_source(keys: Sequence[Hashable], where: dict, lanes: int) -> tuple[_Run, int] | None:
    """The (run, slot) whose lanes are exactly ``keys``, in order, or None."""
    first = where.get(keys[0])
    if first is None or len(keys) != lanes or first[0].lanes != lanes:
        return None
    run, slot, _ = first
    for m, key in enumerate(keys):
        if where.get(key) != (run, slot, m):
            return None
    return run, slot


def _link(runs: list[_Run], nodes: Sequence[Any], where: dict) -> dict[int, Any]:
    """Links varying inputs to earlier runs' stacks; returns AddN nodes rewritten as sums."""
    for run in runs:
        for slot in run.slots:
            for source in slot.sources:
                if source.kind != "varying" or slot.mode in ("read",):
                    continue
                found = _lane_keys_source(source.keys, where, run.lanes)
                if found is None or found[0] is run:
                    continue
                if found[0].slots[found[1]].mode != "list":
                    source.link = StackKey(found[0].index, found[1])
    sums = {}
    in_run = {k for run in runs for k in range(run.start, run.end)}
    for i, node in enumerate(nodes):
        if i in in_run or node.op is None or node.op.type != "AddN" or len(node.inputs) < MIN_LANES:
            continue
        found = _lane_keys_source(node.inputs, where, len(node.inputs))
        if found is not None and found[0].slots[found[1]].mode != "list":
            sums[i] = dataclasses.replace(node, fn=lane_ops.sum_lanes, inputs=[StackKey(found[0].index, found[1])])
    return sums


def _needed_outside(runs: list[_Run], nodes: Sequence[Any], where: dict, sums: dict[int, Any],
                    fetched: set[Hashable]) -> set[Hashable]:
    """Per-lane keys and stack keys that something outside their own run reads."""
    needed = {key for key in fetched if key in where}
    in_run = {k for run in runs for k in range(run.start, run.end)}
    for i, node in enumerate(nodes):
        if i not in in_run:
            needed.update(sums[i].inputs if i in sums else node.inputs)
    for run in runs:
        for slot in run.slots:
            for source in slot.sources:
                if source.kind == "shared":
                    needed.add(source.keys[0])
                elif source.kind == "varying":
                    if source.link is None:
                        needed.update(source.keys)
                    else:
                        needed.add(source.link)
    return needed


# --- the fused node ----------------------------------------------------------------------------
def _fused_node(run: _Run, needed: set[Hashable]) -> Any:
    inputs: list[Hashable] = []
    position: dict[Hashable, int] = {}

    def arg(key: Hashable) -> int:
        if key not in position:
            position[key] = len(inputs)
            inputs.append(key)
        return position[key]

    plan = [_slot_plan(run, j, slot, arg) for j, slot in enumerate(run.slots)]
    outputs: list[Hashable] = []
    emit: list[tuple[int, list[int]]] = []
    for j, slot in enumerate(run.slots):
        lanes = [m for m, node in enumerate(slot.nodes) if node.outputs[0] in needed]
        if lanes:
            emit.append((j, lanes))
            outputs.extend(slot.nodes[m].outputs[0] for m in lanes)
    stacks = [j for j in range(len(run.slots)) if StackKey(run.index, j) in needed]
    outputs.extend(StackKey(run.index, j) for j in stacks)
    first = run.slots[0].nodes[0]
    name = f"{first.name} (+{run.lanes - 1} lanes of {run.period} ops)"
    fn = _LaneProgram(run.lanes, plan, emit, stacks)
    return dataclasses.replace(first, name=name, op_type="_Lanes", fn=fn, inputs=inputs, outputs=outputs,
                               op=None, needs_step=False)


def _slot_plan(run: _Run, j: int, slot: _Slot, arg) -> tuple:
    """What computing slot ``j`` takes: ``(mode, fns, args)`` with each arg spec one of
    ``("slot", j)``, ``("arg", i)`` (one value), ``("args", [i...])`` (a value per lane),
    ``("stack", i)`` (a stacked value)."""
    member = slot.nodes[0]
    specs = []
    for s in slot.sources:
        if s.kind == "slot":
            specs.append(("slot", s.slot))
        elif s.kind == "shared":
            specs.append(("arg", arg(s.keys[0])))
        elif s.link is not None:
            specs.append(("stack", arg(s.link)))
        else:
            specs.append(("args", [arg(k) for k in s.keys]))
    if slot.mode in ("list", "read"):
        return slot.mode, [n.fn for n in slot.nodes], specs
    if slot.mode == "shared":
        return "shared", member.fn, specs
    if slot.mode == "const":
        return "const", lane_ops.stack([n.fn() for n in slot.nodes]), specs
    op = member.op
    kernel, aligned = lane_ops.lift(op, member.fn, run.lanes)
    rank = op.outputs[0].shape.rank
    ranks = [t.shape.rank for t in op.inputs]
    return "stacked", (kernel, aligned, rank, ranks), specs


class _LaneProgram:
    """Computes a run's slots for all lanes; returns the per-lane values and stacks needed."""

    def __init__(self, lanes: int, plan: list[tuple], emit: list[tuple[int, list[int]]], stacks: list[int]):
        self.lanes, self.plan, self.emit, self.stacks = lanes, plan, emit, stacks

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        values: list[Any] = []
        modes: list[str] = []
        for mode, fn, specs in self.plan:
            values.append(self._slot(mode, fn, specs, args, values, modes))
            modes.append("stacked" if mode in ("read", "const") else mode)
        out: list[Any] = []
        for j, lanes in self.emit:
            value, mode = values[j], modes[j]
            if mode == "shared":
                out.extend(value for _ in lanes)
            else:
                parts = value if mode == "list" else lane_ops.unstack(value, self.lanes)
                out.extend(parts[m] for m in lanes)
        for j in self.stacks:
            shared = modes[j] == "shared"
            out.append(lane_ops.broadcast_lanes(values[j], self.lanes) if shared else values[j])
        return out[0] if len(out) == 1 else tuple(out)

    def _slot(self, mode: str, fn: Any, specs: list, args: tuple, values: list, modes: list) -> Any:
        if mode == "const":
            return fn
        if mode == "list":
            return [f() for f in fn]
        if mode == "read":
            spec = specs[0]
            handles = values[spec[1]] if spec[0] == "slot" else [args[i] for i in spec[1]]
            return lane_ops.read_stacked(fn, handles)
        if mode == "shared":
            return fn(*(values[s[1]] if s[0] == "slot" else args[s[1]] for s in specs))
        kernel, aligned, rank, ranks = fn
        operands = []
        for spec, member_rank in zip(specs, ranks):
            kind, where = spec
            if kind == "slot":
                value, stacked = values[where], modes[where] != "shared"
            elif kind == "arg":
                value, stacked = args[where], False
            elif kind == "stack":
                value, stacked = args[where], True
            else:
                value, stacked = lane_ops.stack([args[i] for i in where]), True
            if stacked and aligned:
                value = lane_ops.align(value, member_rank, rank)
            operands.append(value)
        return kernel(*operands)
