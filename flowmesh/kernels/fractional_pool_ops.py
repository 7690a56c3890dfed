"""Kernels of ``ops/fractional_pool_ops.py``: TensorFlow's pooling-sequence generators
(``fractional_pool_common.cc``) and the windowed max/mean as gathers over per-axis window
index tables; the gradients are vector-Jacobian products of the same gathers."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def pooling_sequence(n_in: int, n_out: int, pseudo_random: bool, rng: np.random.Generator) -> np.ndarray:
    """Cumulative window boundaries ``[0, ..., n_in]`` of ``n_out`` windows."""
    k = n_in // n_out
    if pseudo_random:
        alpha = n_in / n_out
        max_u = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = rng.random() * max_u
        cum = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, n_out)] + [n_in + 1]
        diff = np.diff(cum)
    else:
        diff = np.full(n_out, k)
        diff[:n_in % n_out] += 1
        rng.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


def _windows(seq: torch.Tensor, n_in: int, overlapping: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-window cell indices ``[n_out, width]`` (clamped) and their validity mask."""
    starts = seq[:-1]
    ends = torch.clamp(seq[1:] if overlapping else seq[1:] - 1, max=n_in - 1)
    width = int((ends - starts).max().item()) + 1 if len(starts) else 1
    index = starts[:, None] + torch.arange(width)[None, :]
    return torch.clamp(index, max=n_in - 1), index <= ends[:, None]


def pooled(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, overlapping: bool,
           kind: str) -> torch.Tensor:
    ri, rm = _windows(rows, x.shape[1], overlapping)
    ci, cm = _windows(cols, x.shape[2], overlapping)
    patches = x[:, ri][:, :, :, ci]  # [b, out_r, wr, out_c, wc, ch]
    mask = (rm[:, :, None, None] & cm[None, None, :, :])[None, ..., None]
    if kind == "max":
        low = torch.finfo(x.dtype).min if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
        filled = torch.where(mask, patches, torch.full_like(patches, low))
        b, r, wr, c, wc, ch = filled.shape
        flat = filled.permute(0, 1, 3, 5, 2, 4).reshape(b, r, c, ch, wr * wc)
        return flat.max(dim=-1).values
    total = torch.where(mask, patches, torch.zeros_like(patches)).sum(dim=(2, 4))
    return total / mask.sum(dim=(2, 4)).to(total.dtype)


def _check(ctx: KernelContext, x: torch.Tensor, rows: Any, cols: Any) -> tuple[torch.Tensor, torch.Tensor]:
    rows, cols = torch.as_tensor(rows).long().cpu(), torch.as_tensor(cols).long().cpu()
    for seq, n in ((rows, x.shape[1]), (cols, x.shape[2])):
        if seq.numel() < 2 or seq[0] != 0 or seq[-1] > n or (seq[1:] <= seq[:-1]).any():
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): a pooling sequence must rise "
                                       f"from 0 to at most {n}, got {seq.tolist()}")
    return rows, cols


def _forward(ctx: KernelContext, kind: str):
    attrs = ctx.op.attrs
    ratio, overlapping, pseudo = attrs["pooling_ratio"], attrs["overlapping"], attrs["pseudo_random"]
    seed, seed2 = attrs["seed"], attrs["seed2"]
    rng = np.random.default_rng([seed, seed2] if seed or seed2 else int.from_bytes(os.urandom(8), "little"))

    def run(x: torch.Tensor) -> tuple:
        if x.dim() != 4:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): value must be 4-D NHWC, got "
                                       f"{list(x.shape)}")
        if attrs["deterministic"]:
            rng_step = np.random.default_rng([seed, seed2])
        else:
            rng_step = rng
        outs = [int(math.floor(n / r)) for n, r in zip(x.shape[1:3], ratio[1:3])]
        if min(outs) <= 0:
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): pooling_ratio {ratio} leaves "
                                       f"an empty output for input shape {list(x.shape)}")
        rows = torch.from_numpy(pooling_sequence(x.shape[1], outs[0], pseudo, rng_step))
        cols = torch.from_numpy(pooling_sequence(x.shape[2], outs[1], pseudo, rng_step))
        return pooled(x, rows, cols, overlapping, kind), rows, cols
    return run


@kernel("FractionalMaxPool", device_types=("CPU",))
def _fractional_max_pool(ctx: KernelContext):
    return _forward(ctx, "max")


@kernel("FractionalAvgPool", device_types=("CPU",))
def _fractional_avg_pool(ctx: KernelContext):
    return _forward(ctx, "avg")


def _vjp(x: torch.Tensor, grad: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
         overlapping: bool, kind: str) -> torch.Tensor:
    with torch.enable_grad():
        leaf = x.detach().to(grad.dtype).requires_grad_(True)
        out = pooled(leaf, rows, cols, overlapping, kind)
        return torch.autograd.grad(out, leaf, grad)[0]


@kernel("FractionalMaxPoolGrad", device_types=("CPU",))
def _fractional_max_pool_grad(ctx: KernelContext):
    overlapping = ctx.op.attrs["overlapping"]

    def run(x: torch.Tensor, _y: Any, grad: torch.Tensor, rows: Any, cols: Any) -> torch.Tensor:
        r, c = _check(ctx, x, rows, cols)
        if not x.dtype.is_floating_point:
            return torch.zeros_like(x)
        return _vjp(x, grad, r, c, overlapping, "max").to(x.dtype)
    return run


@kernel("FractionalAvgPoolGrad", device_types=("CPU",))
def _fractional_avg_pool_grad(ctx: KernelContext):
    overlapping = ctx.op.attrs["overlapping"]

    def run(shape: Any, grad: torch.Tensor, rows: Any, cols: Any) -> torch.Tensor:
        zeros = torch.zeros([int(s) for s in torch.as_tensor(shape).tolist()], dtype=grad.dtype)
        r, c = _check(ctx, zeros, rows, cols)
        return _vjp(zeros, grad, r, c, overlapping, "avg")
    return run
