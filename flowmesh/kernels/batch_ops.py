"""Kernel of ``BatchFunction`` (``ops/batch_ops.py``): concurrent steps' calls share one run.

The first call to arrive opens a batch and waits up to ``batch_timeout_micros`` for more
(or until ``max_batch_size`` rows are there); later calls join it and wait for their
results. The opener concatenates the arguments along axis 0, pads to the next allowed
batch size (repeating the last row), runs the function once, and hands each call its rows
of every output. Captured tensors are the opener's. A call larger than ``max_batch_size``
runs in pieces when ``enable_large_batch_splitting`` is set, else it is an error.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import torch

from flowmesh.errors import CancelledError, InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.function_program import FunctionProgram

_POLL_S = 0.05


class _Batch:
    def __init__(self) -> None:
        self.calls: list[list[Any]] = []
        self.rows = 0
        self.done = threading.Event()
        self.results: list[list[Any]] = []
        self.error: BaseException | None = None


class _Batcher:
    """Collects calls into batches and runs each batch once (see module docstring)."""

    def __init__(self, ctx: KernelContext, program: FunctionProgram, num_args: int):
        self.program, self.num_args = program, num_args
        self.max_size = int(ctx.attr("max_batch_size"))
        self.timeout_s = int(ctx.attr("batch_timeout_micros")) / 1e6
        self.allowed = [int(s) for s in ctx.attr("allowed_batch_sizes") or []]
        self.split = bool(ctx.attr("enable_large_batch_splitting", True))
        self.name = ctx.op.name
        self.cond = threading.Condition()
        self.open: _Batch | None = None

    def __call__(self, step: Any, args: list[Any], captured: list[Any]) -> list[Any]:
        rows = _rows(args, self.name)
        if rows > self.max_size:
            if not self.split:
                raise InvalidArgumentError(
                    f"BatchFunction '{self.name}': Task size {rows} is larger than maximum "
                    f"input batch size {self.max_size} (set enable_large_batch_splitting=True)")
            pieces = [self(step, [a[i:i + self.max_size] for a in args], captured)
                      for i in range(0, rows, self.max_size)]
            return [torch.cat([p[k] for p in pieces], 0) for k in range(len(pieces[0]))]
        batch, slot, opener = self._join(args, rows)
        if opener:
            self._wait_for_more(batch)
            self._run(step, batch, captured)
        else:
            _wait(batch, step, self.name)
        if batch.error is not None:
            raise batch.error
        return batch.results[slot]

    def _join(self, args: list[Any], rows: int) -> tuple[_Batch, int, bool]:
        with self.cond:
            batch, opener = self.open, False
            if batch is None or batch.rows + rows > self.max_size:
                if batch is not None:
                    self.open = None  # full: its opener runs it now
                batch, opener = _Batch(), True
                self.open = batch
            batch.calls.append(args)
            batch.rows += rows
            if batch.rows >= self.max_size:
                self.open = None
            self.cond.notify_all()
            return batch, len(batch.calls) - 1, opener

    def _wait_for_more(self, batch: _Batch) -> None:
        deadline = time.monotonic() + self.timeout_s
        with self.cond:
            while self.open is batch and (left := deadline - time.monotonic()) > 0:
                self.cond.wait(left)
            if self.open is batch:
                self.open = None

    def _run(self, step: Any, batch: _Batch, captured: list[Any]) -> None:
        try:
            sizes = [_rows(call, self.name) for call in batch.calls]
            merged = [torch.cat([call[k] for call in batch.calls], 0) for k in range(self.num_args)]
            target = next((s for s in self.allowed if s >= batch.rows), batch.rows)
            if target > batch.rows:
                merged = [torch.cat([m, m[-1:].expand(target - batch.rows, *m.shape[1:])], 0)
                          for m in merged]
            outputs = self.program(step, merged + captured)
            for out in outputs:
                if out.shape[0] != target:
                    raise InvalidArgumentError(
                        f"BatchFunction '{self.name}': an output has {out.shape[0]} rows for a "
                        f"batch of {target}; the function must keep the batch (first) axis")
            starts = [sum(sizes[:i]) for i in range(len(sizes))]
            batch.results = [[out[s:s + n] for out in outputs] for s, n in zip(starts, sizes)]
        except BaseException as exc:  # noqa: BLE001 - every caller of the batch gets it
            batch.error = exc
        finally:
            batch.done.set()


def _rows(args: list[Any], name: str) -> int:
    rows = {int(a.shape[0]) for a in args}
    if len(rows) != 1:
        raise InvalidArgumentError(f"BatchFunction '{name}': the arguments' first dimensions "
                                   f"differ ({sorted(rows)}); they must all be the batch size")
    return rows.pop()


def _wait(batch: _Batch, step: Any, name: str) -> None:
    rendezvous = getattr(step, "rendezvous", None)
    while not batch.done.wait(_POLL_S):
        error = rendezvous.aborted if rendezvous is not None else None
        if error is not None:
            raise CancelledError(None, None, f"Step was cancelled while waiting for the batch "
                                             f"of {name}: {error}")


@kernel("BatchFunction", needs_step=True)
def _batch_function(ctx: KernelContext):
    graph = ctx.op.attrs["f"]
    num_args = graph.num_args
    program = FunctionProgram(ctx, graph, graph.outputs, "the batched function")
    batcher = _Batcher(ctx, program, num_args)
    count = len(ctx.op.outputs)

    def run(step: Any, *inputs: Any) -> Any:
        outputs = batcher(step, list(inputs[:num_args]), list(inputs[num_args:]))
        return outputs[0] if count == 1 else tuple(outputs)

    return run
