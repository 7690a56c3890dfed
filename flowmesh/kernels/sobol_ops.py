"""Kernel of ``flowmesh/ops/sobol_ops.py`` (``torch.quasirandom.SobolEngine``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


@kernel("SobolSample", device_types=("CPU",))
def _sobol(ctx: KernelContext):
    out_dtype = ctx.torch_dtype(ctx.attr("dtype"))
    name = ctx.op.name

    def run(dim: Any, num_results: Any, skip: Any) -> Any:
        d, n, s = int(dim), int(num_results), int(skip)
        if not 1 <= d <= torch.quasirandom.SobolEngine.MAXDIM or n < 0 or s < 0:
            raise InvalidArgumentError(
                f"SobolSample '{name}': need 1 <= dim <= {torch.quasirandom.SobolEngine.MAXDIM}, "
                f"num_results >= 0 and skip >= 0; got dim={d}, num_results={n}, skip={s}")
        engine = torch.quasirandom.SobolEngine(d, scramble=False)
        engine.fast_forward(s + 1)
        return engine.draw(n, dtype=torch.float64).to(out_dtype)

    return run
