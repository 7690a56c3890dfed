"""Kernel of the ``If`` op (``flowmesh/ops/cond.py``): runs the branch ``pred`` selects.

Both branches are compiled when the kernel is created (see ``function_program.py``);
a step runs only the selected one, on the ``If`` op's device.
"""

from __future__ import annotations

from typing import Any

from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.function_program import FunctionProgram


@kernel("If", needs_step=True)
def _if(ctx: KernelContext):
    op = ctx.op
    count = len(op.outputs)
    out_dtypes = [t.dtype for t in op.outputs]
    then_graph, else_graph = op.attrs["then_branch"], op.attrs["else_branch"]
    then_fn = FunctionProgram(ctx, then_graph, then_graph.outputs[:count], "the true branch",
                              out_dtypes)
    else_fn = FunctionProgram(ctx, else_graph, else_graph.outputs[:count], "the false branch",
                              out_dtypes)

    if count == 1:
        def run_one(step: Any, pred: Any, *args: Any) -> Any:
            return (then_fn if pred else else_fn)(step, args)[0]

        return run_one

    def run(step: Any, pred: Any, *args: Any) -> Any:
        values = (then_fn if pred else else_fn)(step, args)
        return tuple(values) if count else None

    return run
