"""``SobolSample``: points of the Sobol low-discrepancy sequence (TensorFlow's op type).

Like TensorFlow, the sequence starts after its first point (the origin), so
``sobol_sample(d, n, skip)`` are points ``skip + 1 ... skip + n`` of the unscrambled
sequence built from Joe and Kuo's direction numbers (those TensorFlow and
``torch.quasirandom.SobolEngine`` use; at most 21 201 dimensions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import constant_value, make_tensor


def _sobol_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dim, num = (constant_value(t) for t in inputs[:2])
    dims = [None if num is None else int(num), None if dim is None else int(dim)]
    return [(attrs["dtype"], TensorShape(dims))]


register_op("SobolSample", _sobol_shape, not_differentiable=True)


def sobol_sample(dim: Any, num_results: Any, skip: Any = 0, dtype: Any = dtypes.float32,
                 name: str | None = None) -> Tensor:
    """``[num_results, dim]`` Sobol points in ``[0, 1)``, skipping the first ``skip``.

    Args:
        dim: the dimension of each point (``1 <= dim <= 21201``).
        num_results: how many points.
        skip: how many leading points to skip.
        dtype: ``float32`` or ``float64``.

    Raises:
        TypeError: for another dtype.
    """
    out = dtypes.as_dtype(dtype)
    if out not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"sobol_sample: dtype must be float32 or float64, got {out.name}")
    args = [convert_to_tensor(v, dtype=dtypes.int32, name=n)
            for v, n in ((dim, "dim"), (num_results, "num_results"), (skip, "skip"))]
    return make_tensor("SobolSample", args, {"dtype": out}, name=name or "SobolSample")
