"""Kernel of ``flowmesh/ops/image_transform_ops.py`` (TensorFlow's ``ProjectiveGenerator``
and ``MapCoordinate`` rules, vectorized in torch)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel


def _map(coord: Any, length: int, mode: str) -> Any:
    """Input coordinates outside ``[0, length - 1]`` mapped by the fill mode."""
    if mode == "CONSTANT":
        return coord
    if length <= 1:
        return torch.zeros_like(coord)
    if mode == "NEAREST":
        return coord.clamp(0, length - 1)
    if mode == "REFLECT":
        size2 = 2 * length
        low = coord < 0
        neg = torch.where(coord < -size2, size2 * torch.trunc(-coord / size2) + coord, coord)
        neg = torch.where(neg < -length, neg + size2, -neg - 1)
        high = coord > length - 1
        pos = coord - size2 * torch.trunc(coord / size2)
        pos = torch.where(pos >= length, size2 - pos - 1, pos)
        return torch.where(low, neg, torch.where(high, pos, coord)).clamp(0, length - 1)
    size = length - 1  # WRAP
    low = coord < 0
    neg = coord + length * (torch.trunc(-coord / size) + 1)
    high = coord > length - 1
    pos = coord - length * torch.trunc(coord / size)
    return torch.where(low, neg, torch.where(high, pos, coord)).clamp(0, length - 1)


def _round_half_away(v: Any) -> Any:
    """``std::round``: halves away from zero (torch.round rounds them to even)."""
    return torch.sign(v) * torch.floor(torch.abs(v) + 0.5)


def _read(images: Any, batch: Any, y: Any, x: Any, fill: Any) -> Any:
    """``images[b, y, x, :]`` (integer coordinates), ``fill`` outside the image."""
    _, height, width, _ = images.shape
    inside = (y >= 0) & (y < height) & (x >= 0) & (x < width)
    values = images[batch, y.clamp(0, height - 1).long(), x.clamp(0, width - 1).long()]
    return torch.where(inside[..., None], values, fill)


@kernel("ImageProjectiveTransformV3")
def _transform(ctx: KernelContext):
    interpolation, fill_mode = ctx.attr("interpolation"), ctx.attr("fill_mode")

    def run(images: Any, transforms: Any, output_shape: Any, fill_value: Any) -> Any:
        n, height, width, _ = images.shape
        out_h, out_w = (int(v) for v in output_shape.tolist())
        work = images.to(torch.float32)
        t = transforms.to(torch.float32).reshape(-1, 8).expand(n, 8)[:, :, None, None]
        ys, xs = torch.meshgrid(torch.arange(out_h, dtype=torch.float32, device=work.device),
                                torch.arange(out_w, dtype=torch.float32, device=work.device), indexing="ij")
        projection = t[:, 6] * xs + t[:, 7] * ys + 1.0
        safe = torch.where(projection == 0, torch.ones_like(projection), projection)
        in_x = _map((t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / safe, width, fill_mode)
        in_y = _map((t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / safe, height, fill_mode)
        batch = torch.arange(n, device=work.device)[:, None, None].expand(n, out_h, out_w)
        fill = fill_value.to(torch.float32)
        if interpolation == "NEAREST":
            out = _read(work, batch, _round_half_away(in_y), _round_half_away(in_x), fill)
        else:
            y0, x0 = torch.floor(in_y), torch.floor(in_x)
            y1, x1 = y0 + 1, x0 + 1
            top = (x1 - in_x)[..., None] * _read(work, batch, y0, x0, fill) + \
                (in_x - x0)[..., None] * _read(work, batch, y0, x1, fill)
            bottom = (x1 - in_x)[..., None] * _read(work, batch, y1, x0, fill) + \
                (in_x - x0)[..., None] * _read(work, batch, y1, x1, fill)
            out = (y1 - in_y)[..., None] * top + (in_y - y0)[..., None] * bottom
        out = torch.where((projection == 0)[..., None], fill, out)
        if not images.dtype.is_floating_point:
            out = torch.round(out)
        return out.to(images.dtype)

    return run
