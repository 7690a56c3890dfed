"""Runs agreed collectives on a communicator: fusion plan, packing, transfer, unpacking.

Every function here runs on the engine thread of every rank with the same ``ready``
list (same order, same descriptors), so the sequence of communicator calls is identical
everywhere. Plans are derived only from negotiated descriptors, never from local state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from flowmesh.collective.backends.base import Communicator, ReduceOp
from flowmesh.collective.fusion import BufferPool, pack, plan_buckets, unpack
from flowmesh.collective.negotiation import Descriptor, itemsize, numel
from flowmesh.collective.request import Request
from flowmesh.collective.timeline import Event

Record = Callable[[Event, Sequence[Request]], None]


INLINE_BUDGET = 64 << 10  # bytes of inline payloads a rank receives per cycle, at most


@dataclass
class Job:
    """A request with every rank's descriptor and inline payload (index = rank)."""

    request: Request
    descriptors: list[Descriptor]
    inline: list[bytes | None] = field(default_factory=list)

    @property
    def all_inline(self) -> bool:
        return bool(self.inline) and all(data is not None for data in self.inline)


def inline_payload(request: Request, budget: int) -> bytes | None:
    """The bytes of a small single-dtype CPU all-reduce, to send with its negotiation (so
    the reduction needs no second round trip), or None when it is larger than ``budget``
    or of another kind."""
    tensors = request.tensors
    if (request.kind != "allreduce" or not tensors or tensors[0].device.type != "cpu"
            or tensors[0].dtype == torch.bool or any(t.dtype != tensors[0].dtype for t in tensors)):
        return None
    if sum(t.numel() for t in tensors) * tensors[0].element_size() > budget:
        return None
    return pack(tensors).view(torch.uint8).numpy().tobytes()


@dataclass
class _Item:
    job: Job
    index: int

    @property
    def tensor(self) -> torch.Tensor:
        return self.job.request.tensors[self.index]

    @property
    def spec(self) -> tuple[str, tuple[int, ...]]:
        return self.job.descriptors[0].specs[self.index]

    @property
    def nbytes(self) -> int:
        dtype, shape = self.spec
        return numel(shape) * itemsize(dtype)


class Executor:
    """Performs agreed jobs for one engine (its communicator, pool and fusion threshold)."""

    def __init__(self, comm: Communicator, pool: BufferPool, record: Record):
        self.comm = comm
        self.pool = pool
        self.record = record

    def run(self, jobs: list[Job], threshold: int) -> None:
        """Runs ``jobs``: inline all-reduces locally, all-reduces and broadcasts fused by
        class, the rest one by one."""
        for job in jobs:
            if job.request.kind == "allreduce" and job.all_inline:
                self._inline_allreduce(job)
        fusable = [j for j in jobs if j.request.kind in ("allreduce", "broadcast")
                   and not (j.request.kind == "allreduce" and j.all_inline)]
        for group in _classes(fusable):
            self._run_fused(group, threshold)
        for job in jobs:
            if job.request.kind == "allgather":
                self._allgather(job)
            elif job.request.kind == "reducescatter":
                self._reducescatter(job)

    # --- fused all-reduce / broadcast ---------------------------------------------------------
    def _run_fused(self, items: list[_Item], threshold: int) -> None:
        first = items[0].job.request
        for bucket in plan_buckets([it.nbytes for it in items], threshold):
            chosen = [items[i] for i in bucket]
            start = time.perf_counter()
            flat = _in_place(chosen) if self.comm.size > 1 else None
            in_place = flat is not None
            source = _lone_source(chosen) if first.kind == "allreduce" and not in_place else None
            if source is not None and self.comm.size > 1:
                flat = self.pool.take(source.numel(), source.dtype, source.device)
            elif flat is None:
                source = None
                flat = pack([it.tensor for it in chosen], self.pool)
            if self.comm.size == 1:
                pass  # a group of one: the packed copy is the result
            elif first.kind == "allreduce":
                op = ReduceOp.parse(first.op)
                self.comm.allreduce_each([flat], ReduceOp.SUM if op is ReduceOp.MEAN else op,
                                         sources=[source])
                if op is ReduceOp.MEAN:
                    _divide(flat, self.comm.size)
            else:
                self.comm.broadcast(flat, first.root)
            outputs = unpack(flat, [it.spec[1] for it in chosen])
            event = Event(first.kind, list(dict.fromkeys(it.job.request.name for it in chosen)),
                          flat.numel() * flat.element_size(), start, time.perf_counter(), len(chosen),
                          in_place=in_place)
            self.record(event, _unique_requests(chosen))
            for it, out in zip(chosen, outputs):
                it.job.request.handle.set_output(it.index, out)

    def _inline_allreduce(self, job: Job) -> None:
        """Reduces the payloads every rank sent with the negotiation, in rank order (so all
        ranks compute bit-identical results)."""
        request = job.request
        start = time.perf_counter()
        first = request.tensors[0]
        parts = [torch.frombuffer(bytearray(data), dtype=torch.uint8).view(first.dtype)
                 for data in job.inline]
        op = ReduceOp.parse(request.op)
        stacked = torch.stack(parts)
        flat = _REDUCE[ReduceOp.SUM if op is ReduceOp.MEAN else op](stacked)
        flat = flat.to(first.dtype)
        if op is ReduceOp.MEAN:
            _divide(flat, self.comm.size)
        for i, out in enumerate(unpack(flat, [s for _, s in job.descriptors[0].specs])):
            request.handle.set_output(i, out)
        self.record(Event("allreduce", [request.name], len(job.inline[self.comm.rank] or b""),
                          start, time.perf_counter(), len(request.tensors), inline=True),
                    [request])

    # --- all-gather -------------------------------------------------------------------------
    def _allgather(self, job: Job) -> None:
        request = job.request
        start = time.perf_counter()
        moved = 0
        for indices in _by_dtype(request):
            per_rank = [[numel(d.specs[i][1]) for i in indices] for d in job.descriptors]
            longest = max(sum(sizes) for sizes in per_rank)
            mine = [request.tensors[i] for i in indices]
            local = torch.zeros(longest, dtype=mine[0].dtype, device=mine[0].device)
            if sum(per_rank[self.comm.rank]):
                local[:sum(per_rank[self.comm.rank])] = pack(mine)
            gathered = torch.empty(longest * self.comm.size, dtype=local.dtype, device=local.device)
            self.comm.allgather(gathered, local)
            moved += gathered.numel() * gathered.element_size()
            for k, i in enumerate(indices):
                parts = []
                for r, d in enumerate(job.descriptors):
                    offset = r * longest + sum(per_rank[r][:k])
                    parts.append(gathered[offset:offset + per_rank[r][k]].view(d.specs[i][1]))
                request.handle.set_output(i, torch.cat(parts, dim=0))
        self.record(Event("allgather", [request.name], moved, start, time.perf_counter(),
                          len(request.tensors)), [request])

    # --- reduce-scatter ---------------------------------------------------------------------
    def _reducescatter(self, job: Job) -> None:
        request = job.request
        start = time.perf_counter()
        op = ReduceOp.parse(request.op)
        moved = 0
        for indices in _by_dtype(request):
            flat = pack([request.tensors[i] for i in indices])
            self.comm.allreduce(flat, ReduceOp.SUM if op is ReduceOp.MEAN else op)
            if op is ReduceOp.MEAN:
                _divide(flat, self.comm.size)
            moved += flat.numel() * flat.element_size()
            full = unpack(flat, [tuple(request.tensors[i].shape) for i in indices])
            for i, value in zip(indices, full):
                begin, length = _my_rows(job, i, value.shape[0], self.comm.rank)
                request.handle.set_output(i, value[begin:begin + length])
        self.record(Event("reducescatter", [request.name], moved, start, time.perf_counter(),
                          len(request.tensors)), [request])


def _in_place(chosen: list[_Item]) -> torch.Tensor | None:
    """The flat view of a bucket's only tensor when its submitter donated it and it is
    contiguous: the collective then runs in place, without packing a copy."""
    if len(chosen) != 1:
        return None
    item = chosen[0]
    if not item.job.request.donates(item.index):
        return None
    tensor = item.tensor
    return tensor.view(-1) if tensor.is_contiguous() else None


def _lone_source(chosen: list[_Item]) -> torch.Tensor | None:
    """The flat view of a bucket's only tensor when it is contiguous (and not donated):
    the communicator may reduce it into the output without packing a copy first."""
    if len(chosen) != 1 or not chosen[0].tensor.is_contiguous():
        return None
    return chosen[0].tensor.view(-1)


def _my_rows(job: Job, index: int, n: int, rank: int) -> tuple[int, int]:
    """``(start, length)`` of this rank's rows: the negotiated counts, else an even split."""
    if job.descriptors[0].rows:
        counts = [d.rows[index] for d in job.descriptors]
        return sum(counts[:rank]), counts[rank]
    return shard_range(n, len(job.descriptors), rank)


_REDUCE = {
    ReduceOp.SUM: lambda s: s.sum(0),
    ReduceOp.MAX: lambda s: s.amax(0),
    ReduceOp.MIN: lambda s: s.amin(0),
    ReduceOp.PRODUCT: lambda s: s.prod(0),
}


def shard_range(n: int, parts: int, index: int) -> tuple[int, int]:
    """``(start, length)`` of part ``index`` when ``n`` rows are split into ``parts``
    (the first ``n % parts`` parts get one extra row, like ``numpy.array_split``)."""
    base, extra = divmod(n, parts)
    start = index * base + min(index, extra)
    return start, base + (1 if index < extra else 0)


def _divide(flat: torch.Tensor, size: int) -> None:
    if flat.is_floating_point() or flat.is_complex():
        flat.div_(size)
    else:
        flat.copy_(torch.div(flat, size, rounding_mode="floor"))


def _classes(jobs: list[Job]) -> list[list[_Item]]:
    """Items of fusable jobs grouped by (kind, op, root, device, dtype), in order."""
    groups: dict[tuple[str, str, int, str, str], list[_Item]] = {}
    for job in jobs:
        d = job.descriptors[0]
        for i, (dtype, _) in enumerate(d.specs):
            groups.setdefault((d.kind, d.op, d.root, d.device, dtype), []).append(_Item(job, i))
    return list(groups.values())


def _by_dtype(request: Request) -> list[list[int]]:
    groups: dict[torch.dtype, list[int]] = {}
    for i, t in enumerate(request.tensors):
        groups.setdefault(t.dtype, []).append(i)
    return list(groups.values())


def _unique_requests(items: list[_Item]) -> list[Request]:
    seen: dict[int, Request] = {}
    for it in items:
        seen.setdefault(id(it.job.request), it.job.request)
    return list(seen.values())
