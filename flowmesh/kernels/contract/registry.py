"""Kernel registration: torch implementations of ops, by op type.

A kernel is registered as a *factory*: it receives a :class:`KernelContext` once, when a
step plan is built, and returns the function the executor calls on every step. Reading
attrs and choosing code paths therefore happens once, not per step::

    @kernel("MatMul")
    def _matmul(ctx):
        ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
        if not ta and not tb:
            return torch.matmul
        ...

The returned function takes the op's input values and returns the output value (one
output), a tuple (several outputs) or ``None`` (no outputs). Kernels registered with
``needs_step=True`` receive the running :class:`~flowmesh.kernels.contract.step.StepContext`
as their first argument. Kernels must never modify their inputs in place, except state
kernels updating a variable's own storage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowmesh.core import dtypes

if TYPE_CHECKING:
    import torch

    from flowmesh.core.graph import Operation


class KernelContext:
    """What a kernel factory may look at: the op, its device and session-level state."""

    def __init__(self, op: Operation, device: Any, session_state: Any = None):
        """``device`` is the runtime's ``Device`` (name, ``torch_device``, ``resources``)."""
        self.op = op
        self.device = device
        self.session_state = session_state

    def attr(self, name: str, default: Any = None) -> Any:
        return self.op.attrs.get(name, default)

    @property
    def torch_device(self) -> torch.device:
        return self.device.torch_device

    @property
    def input_dtypes(self) -> list[dtypes.DType]:
        return [t.dtype for t in self.op.inputs]

    @property
    def output_dtypes(self) -> list[dtypes.DType]:
        return [t.dtype for t in self.op.outputs]

    def torch_dtype(self, dtype: dtypes.DType) -> torch.dtype:
        from flowmesh.kernels.contract.convert import torch_dtype

        return torch_dtype(dtype)


KernelFactory = Callable[[KernelContext], Callable[..., Any]]


@dataclass(frozen=True)
class KernelDef:
    """A registered kernel. ``device_types`` lists the device types it runs on (``None``:
    every type; e.g. ``frozenset({"CPU"})`` for host-only ops such as ``py_func``); the
    placer only puts an op on a device type its kernel supports."""

    op_type: str
    factory: KernelFactory
    needs_step: bool = False
    device_types: frozenset[str] | None = None


_KERNELS: dict[str, KernelDef] = {}


def kernel(op_type: str, *, needs_step: bool = False,
           device_types: tuple[str, ...] | None = None) -> Callable[[KernelFactory], KernelFactory]:
    """Decorator registering a kernel factory for ``op_type``.

    Args:
        op_type: the op type.
        needs_step: the kernel takes the ``StepContext`` as first argument.
        device_types: the device types it supports, e.g. ``("CPU",)`` for host-only
            kernels (Python callbacks, I/O, datasets); ``None`` for every type.
    """
    types = None if device_types is None else frozenset(t.upper() for t in device_types)

    def register(factory: KernelFactory) -> KernelFactory:
        if op_type in _KERNELS:
            raise KeyError(f"A kernel for {op_type!r} is already registered")
        _KERNELS[op_type] = KernelDef(op_type, factory, needs_step, types)
        return factory

    return register


def simple_kernel(op_type: str, fn: Callable[..., Any]) -> None:
    """Registers ``fn`` itself as the kernel of an op without attrs that matter."""
    _KERNELS[op_type] = KernelDef(op_type, lambda ctx: fn, False)


def get_kernel(op_type: str) -> KernelDef:
    try:
        return _KERNELS[op_type]
    except KeyError:
        from flowmesh.errors import UnimplementedError

        raise UnimplementedError(None, None, f"No kernel registered for op type '{op_type}'") from None


def kernel_device_types(op_type: str) -> frozenset[str] | None:
    """The device types ``op_type``'s kernel supports (``None``: every type, or no kernel)."""
    found = _KERNELS.get(op_type)
    return None if found is None else found.device_types


def registered_kernels() -> dict[str, KernelDef]:
    return dict(_KERNELS)
