"""Fast resampling engines behind the ``Resize*`` kernels (``kernels/image_resize.py``).

TensorFlow's resize kernels are fused loops over NHWC images; torch has no such kernel for
TensorFlow's pixel alignments, and composing gathers and multiply-adds over ``[..., W, C]``
with ``C = 3`` runs at a fraction of the memory speed (every op walks the whole image in
chunks of three floats). Two engines keep the passes few and the inner loops long:

* :func:`separable` applies one tap matrix per axis (CSR: indices, offsets, weights) as two
  ``embedding_bag`` sums, each over whole contiguous rows of the image (``[W * C]`` floats for
  the height pass, ``[H * C]`` for the width pass after one transpose): bilinear (half-pixel
  centres), bicubic, area, and every gradient (the transposed tap matrices). The axis order
  that moves the fewest elements is chosen per call.
* :func:`bilinear_aligned` runs torch's ``upsample_bilinear2d`` (channels-last) where its
  source coordinates are TensorFlow's to the bit: ``align_corners`` (``dst * (in-1)/(out-1)``)
  and the legacy scaler ``dst * in/out`` (one replicated row and column appended, so that
  ``align_corners`` over ``in + 1 -> out + 1`` has TensorFlow's scale, then the extra output
  row and column dropped). Its half-pixel coordinates are computed with a fused
  multiply-add and differ from TensorFlow's by an ulp, so half-pixel goes to
  :func:`separable`.

Both sum ``w0 * a + w1 * b`` where TensorFlow computes ``a + (b - a) * w1``: the results
differ by an ulp or two of the pixel values (the oracle tests' tolerance).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as nnf


@dataclass(frozen=True, eq=False)
class Taps:
    """A sparse ``[out, in]`` matrix in CSR form (one row per output position); hashed by
    identity (the builders cache them, and the batched index tensors are cached per object)."""

    indices: np.ndarray  # int64 [nnz]: input position of each entry
    offsets: np.ndarray  # int64 [out]: first entry of each row
    weights: np.ndarray  # float32 [nnz]
    in_size: int

    @property
    def out_size(self) -> int:
        return int(self.offsets.shape[0])


def dense_taps(index: np.ndarray, weight: np.ndarray, in_size: int) -> Taps:
    """``Taps`` from ``K`` taps per output (``index``/``weight`` of shape ``[out, K]``)."""
    out, k = index.shape
    return Taps(np.ascontiguousarray(index.reshape(-1), dtype=np.int64),
                np.arange(0, out * k, k, dtype=np.int64),
                np.ascontiguousarray(weight.reshape(-1), dtype=np.float32), in_size)


def from_matrix(matrix: np.ndarray) -> Taps:
    """``Taps`` of the nonzeros of a dense ``[out, in]`` matrix (rows in order)."""
    rows, cols = np.nonzero(matrix)
    counts = np.bincount(rows, minlength=matrix.shape[0])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return Taps(cols.astype(np.int64), offsets, matrix[rows, cols].astype(np.float32),
                matrix.shape[1])


def transposed(taps: Taps) -> Taps:
    """The ``[in, out]`` transpose (what a gradient scatters through), entries of each row
    ordered by output position; repeated (clamped) taps stay separate entries."""
    counts = np.diff(np.append(taps.offsets, taps.indices.shape[0]))
    rows = np.repeat(np.arange(taps.out_size, dtype=np.int64), counts)
    order = np.lexsort((rows, taps.indices))
    per_in = np.bincount(taps.indices, minlength=taps.in_size)
    offsets = np.concatenate([[0], np.cumsum(per_in)[:-1]]).astype(np.int64)
    return Taps(rows[order], offsets, taps.weights[order], taps.out_size)


@functools.lru_cache(maxsize=128)
def _batched(taps: Taps, batch: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """The taps of ``batch`` stacked images (image ``n``'s rows start at ``n * in_size``)."""
    nnz = taps.indices.shape[0]
    shift = np.arange(batch, dtype=np.int64)[:, None]
    indices = (taps.indices[None, :] + shift * taps.in_size).reshape(-1)
    offsets = (taps.offsets[None, :] + shift * nnz).reshape(-1)
    weights = np.tile(taps.weights, batch)
    return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(device)
                 for a in (indices, offsets, weights))


def _apply(table: torch.Tensor, taps: Taps, batch: int) -> torch.Tensor:
    """``[batch * in, D]`` rows combined into ``[batch * out, D]`` rows."""
    indices, offsets, weights = _batched(taps, batch, table.device)
    return nnf.embedding_bag(indices, table, offsets, mode="sum", per_sample_weights=weights)


def separable(x: torch.Tensor, rows: Taps, cols: Taps) -> torch.Tensor:
    """``[n, h, w, c]`` float images through ``rows`` (height) and ``cols`` (width) taps:
    ``[n, rows.out, cols.out, c]``."""
    n, h, w, c = x.shape
    oh, ow = rows.out_size, cols.out_size
    if x.numel() == 0:
        return x.new_zeros((n, oh, ow, c))
    width_first = h * w + 2 * h * ow + oh * ow <= 2 * oh * w + 2 * oh * ow
    if width_first:
        t = x.transpose(1, 2).contiguous().view(n * w, h * c)
        t = _apply(t, cols, n).view(n, ow, h, c).transpose(1, 2).contiguous()
        return _apply(t.view(n * h, ow * c), rows, n).view(n, oh, ow, c)
    t = _apply(x.contiguous().view(n * h, w * c), rows, n).view(n, oh, w, c)
    t = t.transpose(1, 2).contiguous().view(n * w, oh * c)
    return _apply(t, cols, n).view(n, ow, oh, c).transpose(1, 2).contiguous()


def _padded(x: torch.Tensor) -> torch.Tensor:
    """``x`` (NHWC) as float32 with its last row and column repeated once more."""
    n, h, w, c = x.shape
    out = torch.empty((n, h + 1, w + 1, c), dtype=torch.float32, device=x.device)
    out[:, :h, :w] = x
    out[:, h, :w] = out[:, h - 1, :w]
    out[:, :, w] = out[:, :, w - 1]
    return out


@functools.lru_cache(maxsize=256)
def _picks(taps: Taps) -> slice | None:
    """The input positions as a slice when every output lands exactly on one input pixel at
    a constant step (weight 1 on it: ``a + (b - a) * 0`` is ``a`` to the bit), else None."""
    first = taps.indices[taps.offsets]
    if not np.all(taps.weights[taps.offsets] == 1.0):
        return None
    step = int(first[1] - first[0]) if first.shape[0] > 1 else 1
    if step < 1 or not np.array_equal(first, first[0] + step * np.arange(first.shape[0])):
        return None
    return slice(int(first[0]), int(first[-1]) + 1, step)


def bilinear_aligned(x: torch.Tensor, oh: int, ow: int, align_corners: bool,
                     rows: Taps, cols: Taps) -> torch.Tensor:
    """Bilinear resize with TensorFlow's legacy or ``align_corners`` source coordinates
    (``[n, oh, ow, c]``, float32; a view when legacy); ``rows``/``cols`` are its taps (an
    integer downscale by k picks every k-th pixel, exactly what the arithmetic gives)."""
    picked = (_picks(rows), _picks(cols))
    if None not in picked:
        rows = x[:, picked[0]].contiguous()  # whole rows first: long contiguous copies
        return rows[:, :, picked[1]].to(torch.float32).contiguous()
    if align_corners:
        nchw = x.to(torch.float32).permute(0, 3, 1, 2)
        out = nnf.interpolate(nchw, size=(oh, ow), mode="bilinear", align_corners=True)
        return out.permute(0, 2, 3, 1)
    nchw = _padded(x).permute(0, 3, 1, 2)
    out = nnf.interpolate(nchw, size=(oh + 1, ow + 1), mode="bilinear", align_corners=True)
    return out.permute(0, 2, 3, 1)[:, :oh, :ow]
