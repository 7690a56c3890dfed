"""Kernels of ``DrawBoundingBoxesV2``, ``SampleDistortedBoundingBoxV2`` and
``ExtractGlimpseV2`` (``ops/image_box_ops.py``), after TensorFlow's ``draw_bounding_box_op.cc``,
``sample_distorted_bounding_box_op.cc`` and ``eigen_attention.h``. Random draws come from a
NumPy generator seeded by the op's ``seed``/``seed2`` (not TensorFlow's Philox stream)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel

_COLORS = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1],
           [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def _rng(ctx: KernelContext) -> np.random.Generator:
    seed, seed2 = ctx.attr("seed", 0), ctx.attr("seed2", 0)
    if seed == 0 and seed2 == 0:
        return np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    return np.random.default_rng([seed, seed2])


def draw_boxes(images: np.ndarray, boxes: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """TensorFlow's ``DrawBoundingBoxes``: one-pixel outlines, coordinates truncated toward 0."""
    canvas = images.copy()
    _, height, width, depth = canvas.shape
    table = [list(c) for c in colors] if len(colors) else [list(c) for c in _COLORS]
    if depth == 1:
        for color in table:
            color[0] = 1.0
    for b in range(canvas.shape[0]):
        for k in range(boxes.shape[1]):
            color = np.asarray(table[k % len(table)][:depth] + [0.0] * max(0, depth - len(table[0])),
                               dtype=canvas.dtype)[:depth]
            y0, x0, y1, x1 = (int(np.float32(boxes[b, k, i]) * np.float32(size - 1))
                              for i, size in ((0, height), (1, width), (2, height), (3, width)))
            if y0 > y1 or x0 > x1 or y0 >= height or y1 < 0 or x0 >= width or x1 < 0:
                continue
            r0, r1, c0, c1 = max(y0, 0), min(y1, height - 1), max(x0, 0), min(x1, width - 1)
            if y0 >= 0:
                canvas[b, y0, c0:c1 + 1] = color
            if y1 < height:
                canvas[b, y1, c0:c1 + 1] = color
            if x0 >= 0:
                canvas[b, r0:r1 + 1, x0] = color
            if x1 < width:
                canvas[b, r0:r1 + 1, x1] = color
    return canvas


@kernel("DrawBoundingBoxesV2", device_types=("CPU",))
def _draw(ctx: KernelContext):
    def run(images: Any, boxes: Any, colors: Any) -> torch.Tensor:
        imgs, bxs = images.numpy(), boxes.numpy()
        if bxs.ndim != 3 or bxs.shape[0] != imgs.shape[0] or bxs.shape[2] != 4:
            raise InvalidArgumentError(f"DrawBoundingBoxes ({ctx.op.name}): boxes must be [batch, num_boxes, 4] "
                                       f"with batch {imgs.shape[0]}, got {bxs.shape}")
        cols = colors.numpy().reshape(-1, 4) if colors.numel() else np.zeros((0, 4), np.float32)
        return torch.from_numpy(draw_boxes(imgs, bxs, cols))
    return run


def _random_crop(rng: np.random.Generator, width: int, height: int, min_area: float, max_area: float,
                 aspect: float) -> tuple[int, int, int, int] | None:
    """TensorFlow's ``GenerateRandomCrop``: ``(x, y, w, h)`` or None."""
    min_h = int(np.rint(np.sqrt(min_area / aspect)))
    max_h = int(np.rint(np.sqrt(max_area / aspect)))
    if int(np.rint(max_h * aspect)) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if int(np.rint(max_h * aspect)) > width:
            max_h -= 1
    max_h = min(max_h, height)
    min_h = min(min_h, max_h)
    h = min_h + (int(rng.integers(max_h - min_h + 1)) if min_h < max_h else 0)
    w = int(np.rint(h * aspect))
    if w * h < min_area:
        h += 1
        w = int(np.rint(h * aspect))
    if w * h < min_area or w * h > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(rng.integers(height - h)) if h < height else 0
    x = int(rng.integers(width - w)) if w < width else 0
    return x, y, w, h


def _covers(crop: tuple[int, int, int, int], boxes: list[tuple[float, float, float, float]], fraction: float) -> bool:
    x, y, w, h = crop
    if not boxes:
        return True
    for ymin, xmin, ymax, xmax in boxes:
        area = (ymax - ymin) * (xmax - xmin)
        if area <= 0:
            continue
        inter = max(0.0, min(ymax, y + h) - max(ymin, y)) * max(0.0, min(xmax, x + w) - max(xmin, x))
        if inter / area >= fraction:
            return True
    return False


@kernel("SampleDistortedBoundingBoxV2", device_types=("CPU",))
def _sample_box(ctx: KernelContext):
    rng = _rng(ctx)
    aspect_lo, aspect_hi = ctx.attr("aspect_ratio_range")
    area_lo, area_hi = ctx.attr("area_range")
    attempts, use_image = ctx.attr("max_attempts"), ctx.attr("use_image_if_no_bounding_boxes")

    def run(image_size: Any, bounding_boxes: Any, min_covered: Any) -> tuple:
        size = [int(v) for v in image_size.tolist()]
        if len(size) != 3 or size[0] <= 0 or size[1] <= 0:
            raise InvalidArgumentError(f"SampleDistortedBoundingBoxV2 ({ctx.op.name}): image_size must be "
                                       f"[height, width, channels] with positive sizes, got {size}")
        height, width = size[0], size[1]
        raw = bounding_boxes.numpy().reshape(-1, 4)
        if raw.size == 0 and not use_image:
            raise InvalidArgumentError(f"SampleDistortedBoundingBoxV2 ({ctx.op.name}): no bounding boxes "
                                       "provided as input; pass use_image_if_no_bounding_boxes=True to use the image")
        if np.any((raw < 0) | (raw > 1)):
            raise InvalidArgumentError(f"SampleDistortedBoundingBoxV2 ({ctx.op.name}): bounding boxes must be "
                                       f"within [0, 1], got {raw.tolist()}")
        boxes = [(b[0] * height, b[1] * width, b[2] * height, b[3] * width) for b in raw.tolist()] or \
            [(0.0, 0.0, float(height), float(width))]
        area = float(height * width)
        crop = None
        for _ in range(attempts):
            aspect = float(rng.uniform(aspect_lo, aspect_hi))
            found = _random_crop(rng, width, height, area_lo * area, area_hi * area, aspect)
            if found is not None and _covers(found, boxes, float(min_covered)):
                crop = found
                break
        x, y, w, h = crop or (0, 0, width, height)
        dtype = image_size.dtype
        begin = torch.tensor([y, x, 0], dtype=dtype)
        extent = torch.tensor([h, w, -1], dtype=dtype)
        bbox = torch.tensor([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=torch.float32)
        return begin, extent, bbox
    return run


@kernel("ExtractGlimpseV2", device_types=("CPU",))
def _glimpse(ctx: KernelContext):
    centered, normalized, noise = ctx.attr("centered"), ctx.attr("normalized"), ctx.attr("noise")
    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))

    def run(image: Any, size: Any, offsets: Any) -> torch.Tensor:
        x_in, (gh, gw), offs = image.numpy(), (int(v) for v in size.tolist()), offsets.numpy()
        batch, height, width, channels = x_in.shape
        if offs.shape != (batch, 2):
            raise InvalidArgumentError(f"ExtractGlimpse ({ctx.op.name}): offsets must be [{batch}, 2], got "
                                       f"{offs.shape}")
        out = np.zeros((batch, gh, gw, channels), np.float32)
        for b in range(batch):
            y, x = float(offs[b, 0]), float(offs[b, 1])
            if normalized:
                y, x = y * height, x * width
            if centered:  # [-1, 1] (normalized) or [-size, size] (pixels) around the centre
                y, x = y / 2.0 + height / 2.0, x / 2.0 + width / 2.0
            # the window's corner, truncated toward 0 as TensorFlow's integer cast does
            y0, x0 = int(np.float32(y - gh / 2.0)), int(np.float32(x - gw / 2.0))
            out[b] = _fill(rng, x_in[b], noise, gh, gw)
            ys, xs = slice(max(y0, 0), min(y0 + gh, height)), slice(max(x0, 0), min(x0 + gw, width))
            if ys.start < ys.stop and xs.start < xs.stop:
                out[b, ys.start - y0:ys.stop - y0, xs.start - x0:xs.stop - x0] = x_in[b, ys, xs]
        return torch.from_numpy(out)
    return run


def _fill(rng: np.random.Generator, image: np.ndarray, noise: str, gh: int, gw: int) -> np.ndarray:
    """Uniform noise within the image's range, or per-channel Gaussian noise with the
    channel's mean and standard deviation clipped to its range, or zeros."""
    channels = image.shape[-1]
    flat = image.reshape(-1, channels)
    if noise == "zero" or flat.size == 0:
        return np.zeros((gh, gw, channels), np.float32)
    if noise == "uniform":
        return rng.uniform(flat.min(), flat.max(), (gh, gw, channels)).astype(np.float32)
    drawn = rng.normal(flat.mean(0), flat.std(0), (gh, gw, channels))
    return np.clip(drawn, flat.min(0), flat.max(0)).astype(np.float32)
