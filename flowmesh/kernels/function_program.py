"""Runs a function graph (an ``If`` branch, a ``While`` condition or body) inside a kernel.

A function graph is compiled once, when the control-flow op's kernel is created, into a
:class:`~flowmesh.runtime.executor.Program` with the session's own machinery
(``KernelCache.compile_function``: the runtime's prune + ``lower_partition``): every op of the function runs on the
control-flow op's device, and its kernels come from the session's kernel cache, so
stateful kernels (random generators, variable handles) keep their state across steps.

Errors inside a function name the inner node and say which function of which op failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import OpError
from flowmesh.kernels.contract.convert import TORCH_DTYPES
from flowmesh.kernels.contract.kernel_cache import KernelCache
from flowmesh.kernels.contract.registry import KernelContext


class FunctionProgram:
    """A compiled function: ``program(step, inputs) -> list of output values``.

    Args:
        ctx: the kernel context of the control-flow op (device, session state).
        graph: the function graph; its ``inputs`` are fed in order.
        outputs: the tensors to return; ``None`` marks a dummy output (see
            ``core/function.py``) returned as an empty value of ``dummy_dtypes[i]``.
        label: how errors name this function (``"the true branch"``).
        dummy_dtypes: dtype of every output position (only read for dummies).
    """

    def __init__(self, ctx: KernelContext, graph: Any, outputs: Sequence[Tensor | None], label: str,
                 dummy_dtypes: Sequence[dtypes.DType] | None = None):
        fetches = [t for t in outputs if t is not None]
        self._program = session_kernels(ctx).compile_function(ctx.device, fetches, list(graph.inputs))
        self._program.name = ctx.device.name  # traces (RunMetadata) group inner nodes by device
        self._label = label
        self._op = ctx.op
        self._dummies = [
            (i, _dummy_value((dummy_dtypes or [])[i] if dummy_dtypes else None, ctx.torch_device))
            for i, t in enumerate(outputs) if t is None
        ]

    def __call__(self, step: Any, inputs: Sequence[Any]) -> list[Any]:
        try:
            values = self._program(step, inputs)
        except OpError as exc:
            raise _in_function(exc, self._label, self._op) from exc
        for index, value in self._dummies:
            values.insert(index, value)
        return values


def session_kernels(ctx: KernelContext) -> Any:
    """The session's kernel cache (a private one when the session state has none)."""
    cache = getattr(ctx.session_state, "kernels", None)
    if isinstance(cache, KernelCache):
        return cache
    return KernelCache(ctx.session_state)


def _dummy_value(dtype: dtypes.DType | None, device: torch.device) -> Any:
    torch_dtype = TORCH_DTYPES.get(dtype) if dtype is not None else None
    if torch_dtype is None:
        return None
    return torch.empty(0, dtype=torch_dtype, device=device)


def _in_function(exc: OpError, label: str, op: Any) -> OpError:
    message = f"{exc.message}\n\t [[in {label} of {op.type} node '{op.name}']]"
    try:
        wrapped = type(exc)(exc.node_def, exc.op, message)
    except TypeError:  # an OpError subclass with another constructor
        return exc
    return wrapped
