"""Kernels of ``flowmesh/ops/collective_ops.py``: submit requests to the collective engine.

Each kernel builds a :class:`~flowmesh.collective.request.Request` from its inputs, hands
it to the engine of its group (torch.distributed for the world group, in-process hubs
for local groups) and waits on the handle, bounded by the step's timeout and woken when
the step is aborted. ``CollectiveAllReduceStart`` only submits and returns the handle;
``CollectiveWait`` waits on it. Traced steps get the engine's events in a lane named
``<device>/collective:<group>``.

All-reduce and broadcast kernels expose ``kernel.donating(mask)``: the same kernel,
telling the engine which inputs it may work on in place. The buffer-forwarding pass
(``flowmesh/runtime/forwarding.py``) uses it for inputs provably dead after the op, as
TensorFlow's collective kernels forward an input whose buffer nobody else holds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from flowmesh.collective import context
from flowmesh.collective.engine import CollectiveEngine
from flowmesh.collective.request import Donation, Handle, Request
from flowmesh.collective.timeline import TraceLane
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.contract.step import StepContext

DONATING_KINDS = ("allreduce", "broadcast")  # kinds the engine can run in place


@dataclass(frozen=True)
class _Spec:
    """What a collective kernel reads from its op once, at plan time."""

    kind: str
    key: str
    name: str
    group_key: int
    group_size: int
    member: int
    op: str
    root: int
    device: str
    num_rows: int = 0

    @classmethod
    def of(cls, ctx: KernelContext, kind: str) -> _Spec:
        instance = ctx.attr("instance_key")
        key = f"i{instance}" if instance is not None else f"n{ctx.op.name}"
        return cls(kind, key, ctx.op.name, ctx.attr("group_key", 0), ctx.attr("group_size", -1),
                   ctx.attr("member", -1), ctx.attr("merge_op", ""), ctx.attr("root", 0),
                   ctx.device.name, ctx.attr("num_rows", 0))

    def engine(self) -> CollectiveEngine:
        return context.engine_for(self.group_key, self.group_size, self.member)

    def request(self, step: StepContext, engine: CollectiveEngine,
                tensors: tuple[torch.Tensor, ...], donated: Donation = False) -> Request:
        if self.kind == "broadcast" and not 0 <= self.root < engine.size:
            raise InvalidArgumentError(
                None, None, f"Broadcast '{self.name}' has root {self.root} but the group has "
                f"{engine.size} member(s); use a root in [0, {engine.size})")
        data, rows = list(tensors), ()
        if self.num_rows:
            data, rows = data[:-self.num_rows], tuple(int(r) for r in data[-self.num_rows:])
        return Request(self.kind, self.key, self.name, data, self.op, self.root,
                       _sinks(step, engine, self.device), rows, donated)


def _donating(fn: Callable[..., Any]) -> Callable[[tuple[bool, ...]], Callable[..., Any]]:
    """``fn.donating(mask)``: ``fn`` told which inputs its caller gives up (see
    ``runtime/forwarding.py``)."""
    return lambda mask: functools.partial(fn, donated=mask)


def _sinks(step: StepContext, engine: CollectiveEngine, device: str) -> list[tuple[list, Any]]:
    if step.trace is None:
        return []
    lane_key = f"collective-lane/{device}/{engine.label}/{engine.rank}"
    lane = step.trace_lanes.get(lane_key)
    if lane is None:
        lane = step.trace_lanes.setdefault(lane_key, TraceLane(f"{device}/collective:{engine.label}"))
    return [(step.trace, lane)]


def _abort_check(step: StepContext) -> Callable[[], BaseException | None]:
    return lambda: step.rendezvous.aborted


def _blocking(kind: str) -> Callable[[KernelContext], Callable[..., Any]]:
    def factory(ctx: KernelContext) -> Callable[..., Any]:
        spec = _Spec.of(ctx, kind)
        single = len(ctx.op.outputs) == 1

        def run(step: StepContext, *tensors: torch.Tensor, donated: Donation = False) -> Any:
            engine = spec.engine()
            outputs = engine.run(spec.request(step, engine, tensors, donated), step.timeout,
                                 _abort_check(step))
            return outputs[0] if single else tuple(outputs)

        if kind in DONATING_KINDS:
            run.donating = _donating(run)  # type: ignore[attr-defined]
        return run

    return factory


kernel("CollectiveAllReduce", needs_step=True)(_blocking("allreduce"))
kernel("CollectiveAllGather", needs_step=True)(_blocking("allgather"))
kernel("CollectiveBroadcast", needs_step=True)(_blocking("broadcast"))
kernel("CollectiveReduceScatter", needs_step=True)(_blocking("reducescatter"))


@kernel("CollectiveAllReduceStart", needs_step=True)
def _all_reduce_start(ctx: KernelContext) -> Callable[..., tuple[CollectiveEngine, Handle]]:
    spec = _Spec.of(ctx, "allreduce")

    def start(step: StepContext, *tensors: torch.Tensor,
              donated: Donation = False) -> tuple[CollectiveEngine, Handle]:
        engine = spec.engine()
        return engine, engine.submit(spec.request(step, engine, tensors, donated))

    start.donating = _donating(start)  # type: ignore[attr-defined]
    return start


@kernel("CollectiveWait", needs_step=True)
def _wait(ctx: KernelContext) -> Callable[..., Any]:
    single = len(ctx.op.outputs) == 1

    def wait(step: StepContext, started: tuple[CollectiveEngine, Handle]) -> Any:
        engine, handle = started
        outputs = engine.wait(handle, step.timeout, _abort_check(step))
        return outputs[0] if single else tuple(outputs)

    return wait


def _group_query(ctx: KernelContext, what: str) -> Callable[..., torch.Tensor]:
    group_key, group_size, member = ctx.attr("group_key", 0), ctx.attr("group_size", -1), \
        ctx.attr("member", -1)

    def query() -> torch.Tensor:
        engine = context.engine_for(group_key, group_size, member)
        return torch.tensor(engine.rank if what == "rank" else engine.size, dtype=torch.int32)

    return query


kernel("CollectiveGroupRank")(lambda ctx: _group_query(ctx, "rank"))
kernel("CollectiveGroupSize")(lambda ctx: _group_query(ctx, "size"))
