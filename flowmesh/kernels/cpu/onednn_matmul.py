"""fp32 CPU MatMul through oneDNN (``torch.ops.mkldnn._linear_pointwise``) or MKL's sgemm.

torch's ``mm`` on CPU calls MKL's sgemm; TensorFlow calls oneDNN. Which is faster depends on
the CPU (``kernels/cpu/gemm_choice.py`` has the figures), so each kind of product measures both
once and keeps the faster. ``_linear_pointwise(a, w, None, "none", [], "")`` computes
``a @ w.T`` on plain strided fp32 tensors, so ``a @ b`` is ``_linear_pointwise(a, b.mT)``
with no copy; MKL's ``torch.mm(a, b)`` takes the same views. The results differ only in
float32 summation order.

The choice is made for 2-D operands whose inner dimension is >= ``MIN_K`` (below that MKL's
small-matrix path wins) and, for ``transpose_a`` (the weight gradient ``x^T @ g``), whose
output width is >= ``MIN_N_TRANSPOSED_A`` (oneDNN lost there at 2 threads). Anything else
(batched, strided views oneDNN rejects, empty, other dtypes, torch built without mkldnn,
``FLOWMESH_ONEDNN_MATMUL=0``) goes to ``torch.matmul``. Figures: benchmarks/RESULTS.md,
"Keras fit (issue 15)" and "Session 18".

Narrow outputs (fewer than ``SMALL_N`` columns, more rows than columns, e.g. a 10-class
logits layer and its weight gradient) are computed transposed, ``(w @ a^T)^T``, by MKL
and copied back to row-major: MKL's sgemm took 32-38 us for the 128x256x10 products
and 12-14 us for their transposes (oneDNN 17-32 us).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from flowmesh import config
from flowmesh.core import dtypes
from flowmesh.kernels.cpu import chunk_pool, gemm_choice

MIN_K = 64
MIN_N_TRANSPOSED_A = 64
SMALL_N = 16
CHUNK_MIN_MACS = 4_000_000  # smaller products are not worth splitting (dynamic mode)
CHUNK_MIN_ROWS = 32         # fewest rows of ``a`` per chunk
CHUNKS = 4                  # chunks per product in dynamic mode

_available: bool | None = None


def available() -> bool:
    """Whether this torch has a working oneDNN ``_linear_pointwise`` (probed once)."""
    global _available
    if _available is None:
        _available = _probe()
    return _available


def _probe() -> bool:
    try:
        if not torch.backends.mkldnn.is_available():
            return False
        op = torch.ops.mkldnn._linear_pointwise
        a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        out = op(a, a, None, "none", [], "")
        return bool(torch.equal(out, a @ a.mT))
    except (AttributeError, RuntimeError):
        return False


MODES = ("auto", "1", "0")


def mode() -> str:
    """``FLOWMESH_ONEDNN_MATMUL``: ``auto`` (measure), ``1`` (oneDNN) or ``0`` (MKL)."""
    value = config.ONEDNN_MATMUL.get().strip().lower()
    if value not in MODES:
        raise ValueError(f"FLOWMESH_ONEDNN_MATMUL={value!r} is not one of {', '.join(MODES)}: "
                         "unset it to let each kind of product measure oneDNN against MKL")
    return value


def usable(device: torch.device, input_dtypes: list[dtypes.DType]) -> bool:
    """Whether a MatMul placed on ``device`` with these input dtypes may take oneDNN."""
    return (device.type == "cpu" and all(d == dtypes.float32 for d in input_dtypes)
            and mode() != "0" and available())


def _plain(t: Any) -> bool:
    """Row- or column-major 2-D (the strides oneDNN's inner product accepts)."""
    return t.is_contiguous() or t.mT.is_contiguous()


def matmul_fn(transpose_a: bool, transpose_b: bool) -> Callable[[Any, Any], Any]:
    """The MatMul kernel for these transposes: oneDNN or MKL, whichever measured faster for
    each kind of product (always oneDNN under ``FLOWMESH_ONEDNN_MATMUL=1``)."""
    min_n = MIN_N_TRANSPOSED_A if transpose_a else 1
    kernel = gemm_choice.product if mode() == "auto" else gemm_choice.onednn

    def run(a: Any, b: Any) -> Any:
        a = a.mT if transpose_a else a
        w = b if transpose_b else b.mT  # [n, k]: _linear_pointwise computes a @ w.T
        if a.dim() == 2 and w.dim() == 2 and w.shape[0] < SMALL_N and a.shape[0] > w.shape[0] \
                and a.shape[1] == w.shape[1]:
            return torch.mm(w, a.mT).mT.contiguous()
        if (a.dim() == 2 and w.dim() == 2 and a.shape[1] >= MIN_K and a.shape[0] > 0
                and w.shape[0] >= min_n and a.shape[1] == w.shape[1] and _plain(a) and _plain(w)):
            pool = chunk_pool.active()
            if pool is not None and a.shape[0] * a.shape[1] * w.shape[0] >= CHUNK_MIN_MACS:
                return _chunked(pool, a, w)
            return kernel(a, w)
        return torch.matmul(a, w.mT)

    return run


def _chunked(pool: chunk_pool.ChunkPool, a: Any, w: Any) -> Any:
    """``a @ w.T`` as row chunks of ``a`` computed by the caller and the pool's helpers
    (``kernels/cpu/chunk_pool.py``); a column-major ``a`` (``transpose_a``) is copied chunk
    by chunk into rows oneDNN accepts."""
    rows = a.shape[0]
    count = max(1, min(CHUNKS, rows // CHUNK_MIN_ROWS))
    step = -(-rows // count)
    bounds = [(r, min(r + step, rows)) for r in range(0, rows, step)]
    row_major = a.is_contiguous()

    def compute(i: int) -> Any:
        r0, r1 = bounds[i]
        part = a[r0:r1] if row_major else a[r0:r1].contiguous()
        return gemm_choice.onednn(part, w)

    return torch.cat(pool.run(len(bounds), compute))
