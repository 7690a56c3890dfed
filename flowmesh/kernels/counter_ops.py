"""Kernel of ``flowmesh/ops/counter_ops.py``: read, check and increment under the
variable's lock, so concurrent steps never count the same value twice."""

from __future__ import annotations

from typing import Any

from flowmesh.errors import OutOfRangeError
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("ResourceCountUpTo")
def _count_up_to(ctx: KernelContext):
    limit = ctx.attr("limit")

    def run(state: Any) -> Any:
        with state.lock:
            value = state.read()
            if int(value) >= limit:
                raise OutOfRangeError(None, None, f"Reached limit of {limit} (variable {state.name})")
            before = value.clone()
            value.add_(1)
        return before

    return run
