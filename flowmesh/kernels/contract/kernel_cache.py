"""A session's kernel instances, and how kernels compile function graphs.

:class:`KernelCache` keeps one kernel instance per (op, device) for a session, so stateful
kernels (random generators, variable handles) keep their state across plans and steps.
Control-flow kernels compile their branch and body graphs with
:meth:`KernelCache.compile_function`, which calls the compiler the runtime registers
(``runtime/plan.py``: prune + ``lower_partition``): kernels never import the runtime.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.kernels.contract.debug_dump import dumped_outputs
from flowmesh.kernels.contract.numerics_check import checked_numerics
from flowmesh.kernels.contract.registry import KernelContext, get_kernel

FunctionCompiler = Callable[["KernelCache", Any, Sequence[Tensor], Sequence[Tensor]], Any]
_compiler: FunctionCompiler | None = None


def register_function_compiler(fn: FunctionCompiler) -> None:
    """Registers ``fn(kernels, device, fetches, feeds) -> program`` (the runtime's)."""
    global _compiler
    _compiler = fn


class KernelCache:
    """Kernel instances of a session, one per (op, device, output count).

    Args:
        session_state: what kernels see as ``KernelContext.session_state``.
    """

    def __init__(self, session_state: Any = None):
        # Keyed by output count too: If/While ops gain outputs when their gradient is built,
        # and plans compiled earlier keep the kernel instance of the old arity.
        self._kernels: dict[tuple[Operation, str, int], tuple[Callable[..., Any], bool]] = {}
        self._lock = threading.Lock()
        self.session_state = session_state

    def get(self, op: Operation, device: Any) -> tuple[Callable[..., Any], bool]:
        """``(kernel function, needs_step)`` of ``op`` on ``device`` (a runtime Device)."""
        key = (op, device.name, len(op.outputs))
        found = self._kernels.get(key)
        if found is None:
            kernel_def = get_kernel(op.type)
            fn = kernel_def.factory(KernelContext(op, device, self.session_state))
            if op.attrs.get("_check_numerics"):  # created under tf.debugging.enable_check_numerics
                fn = checked_numerics(op, fn, kernel_def.needs_step)
            if op.attrs.get("_debug_dump"):  # created under tf.debugging.experimental.enable_dump_debug_info
                fn = dumped_outputs(op, fn)
            found = (fn, kernel_def.needs_step)
            with self._lock:
                found = self._kernels.setdefault(key, found)
        return found

    def compile_function(self, device: Any, fetches: Sequence[Tensor], feeds: Sequence[Tensor]) -> Any:
        """A program computing ``fetches`` from ``feeds`` on ``device``, every op of the
        function graph running there with this cache's kernels.

        Raises:
            RuntimeError: no runtime registered its compiler (import flowmesh).
        """
        if _compiler is None:
            raise RuntimeError("Function graphs need the runtime's compiler: import flowmesh")
        return _compiler(self, device, fetches, feeds)
