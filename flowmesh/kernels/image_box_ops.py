"""Kernels of ``ops/image_box_ops.py``. Non-max suppression follows TensorFlow's
``non_max_suppression_op.cc`` (a score-ordered queue, ties to the lower index, IoU in float32,
Soft-NMS re-queueing); ``CropAndResize`` is TensorFlow's sampling written with torch, its
gradient kernels are the vector-Jacobian products of that same function."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def iou_matrix(boxes: np.ndarray) -> np.ndarray:
    """``[n, n]`` IoU of corner boxes in float32 (0 when either box is empty)."""
    b = boxes.astype(np.float32)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = np.maximum(np.minimum(ymax[:, None], ymax[None]) - np.maximum(ymin[:, None], ymin[None]), np.float32(0))
    iw = np.maximum(np.minimum(xmax[:, None], xmax[None]) - np.maximum(xmin[:, None], xmin[None]), np.float32(0))
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None] - inter)
    iou[(area[:, None] <= 0) | (area[None] <= 0)] = 0
    return iou.astype(np.float32)


def greedy_nms(similarity: np.ndarray, scores: np.ndarray, max_size: int, threshold: float,
               score_threshold: float, soft_sigma: float = 0.0) -> tuple[list[int], list[float]]:
    """TensorFlow's ``DoNonMaxSuppressionOp``: selected indices and their (soft) scores."""
    if max_size < 0:
        raise InvalidArgumentError(f"NonMaxSuppression: max_output_size must be non-negative, got {max_size}")
    dtype = scores.dtype.type
    scale = dtype(-0.5 / soft_sigma) if soft_sigma > 0 else dtype(0)
    threshold, score_threshold = dtype(threshold), dtype(score_threshold)
    # [-score, index, suppress_begin]: a list kept sorted stands in for the priority queue
    queue = sorted([[-scores[i], i, 0] for i in range(len(scores)) if scores[i] > score_threshold],
                   key=lambda c: (c[0], c[1]))
    selected: list[int] = []
    selected_scores: list[float] = []
    while len(selected) < max_size and queue:
        neg, index, begin = queue.pop(0)
        score = original = dtype(-neg)
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = dtype(similarity[index, selected[j]])
            weight = dtype(math.exp(scale * sim * sim)) if soft_sigma > 0 or sim <= threshold else dtype(0)
            score = dtype(score * weight)
            if soft_sigma <= 0 and sim > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            entry = [-score, index, len(selected)]
            position = 0
            while position < len(queue) and (queue[position][0], queue[position][1]) < (entry[0], entry[1]):
                position += 1
            queue.insert(position, entry)
    return selected, selected_scores


def _nms_kernel(op_type: str):
    def factory(ctx: KernelContext):
        pad = ctx.attr("pad_to_max_output_size", False)

        def run(boxes: Any, scores: Any, max_size: Any, threshold: Any, score_threshold: Any,
                sigma: Any = None) -> Any:
            b, s = _np(boxes), _np(scores)
            size = int(max_size)
            if op_type == "NonMaxSuppressionWithOverlaps":
                if b.ndim != 2 or b.shape[0] != b.shape[1]:
                    raise InvalidArgumentError(f"{op_type} ({ctx.op.name}): overlaps must be square, got {b.shape}")
                similarity = b.astype(np.float32)
            else:
                if b.ndim != 2 or b.shape[-1] != 4:
                    raise InvalidArgumentError(f"{op_type} ({ctx.op.name}): boxes must be [num_boxes, 4], "
                                               f"got {b.shape}")
                similarity = iou_matrix(b)
            if s.shape != (b.shape[0],):
                raise InvalidArgumentError(f"{op_type} ({ctx.op.name}): scores must be [{b.shape[0]}] to match "
                                           f"boxes, got {s.shape}")
            t = float(threshold)
            if not 0 <= t <= 1 and op_type != "NonMaxSuppressionWithOverlaps":
                raise InvalidArgumentError(f"{op_type} ({ctx.op.name}): iou_threshold must be in [0, 1], got {t}")
            chosen, chosen_scores = greedy_nms(similarity, s, size, t, float(score_threshold),
                                               float(sigma) if sigma is not None else 0.0)
            valid = len(chosen)
            if pad:
                chosen = chosen + [0] * (size - valid)
                chosen_scores = chosen_scores + [0.0] * (size - valid)
            indices = torch.tensor(chosen, dtype=torch.int32)
            if op_type == "NonMaxSuppressionV3" or op_type == "NonMaxSuppressionWithOverlaps":
                return indices
            count = torch.tensor(valid, dtype=torch.int32)
            if op_type == "NonMaxSuppressionV4":
                return indices, count
            return indices, torch.tensor(np.asarray(chosen_scores, dtype=s.dtype)), count
        return run
    return factory


for _type in ("NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps"):
    kernel(_type, device_types=("CPU",))(_nms_kernel(_type))


def _combined_one(boxes: np.ndarray, scores: np.ndarray, per_class: int, total: int, iou: float,
                  score_threshold: float, clip: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    num_classes = scores.shape[1]
    found: list[tuple[float, int, np.ndarray]] = []
    for c in range(num_classes):
        class_boxes = boxes[:, 0 if boxes.shape[1] == 1 else c, :]
        chosen, _ = greedy_nms(iou_matrix(class_boxes), scores[:, c], per_class, iou, score_threshold)
        found.extend((float(scores[i, c]), c, class_boxes[i]) for i in chosen)
    found.sort(key=lambda f: -f[0])
    found = found[:total]
    out_boxes = np.zeros((total, 4), np.float32)
    out_scores = np.zeros(total, np.float32)
    out_classes = np.zeros(total, np.float32)
    for k, (score, c, box) in enumerate(found):
        out_boxes[k] = np.clip(box, 0, 1) if clip else box
        out_scores[k], out_classes[k] = score, c
    return out_boxes, out_scores, out_classes, len(found)


@kernel("CombinedNonMaxSuppression", device_types=("CPU",))
def _combined_nms(ctx: KernelContext):
    pad_per_class, clip = ctx.attr("pad_per_class"), ctx.attr("clip_boxes")

    def run(boxes: Any, scores: Any, per_class: Any, total: Any, iou: Any, score_threshold: Any) -> tuple:
        b, s = _np(boxes).astype(np.float32), _np(scores).astype(np.float32)
        if b.ndim != 4 or s.ndim != 3 or b.shape[:2] != s.shape[:2] or b.shape[2] not in (1, s.shape[2]):
            raise InvalidArgumentError(f"CombinedNonMaxSuppression ({ctx.op.name}): boxes {b.shape} must be "
                                       f"[batch, num_boxes, q, 4] with q 1 or num_classes of scores {s.shape}")
        per, size = int(per_class), int(total)
        if size <= 0 or per <= 0:
            raise InvalidArgumentError(f"CombinedNonMaxSuppression ({ctx.op.name}): max_output_size_per_class "
                                       f"and max_total_size must be > 0, got {per} and {size}")
        if pad_per_class:
            size = min(size, per * s.shape[2])
        results = [_combined_one(b[i], s[i], per, size, float(iou), float(score_threshold), clip)
                   for i in range(b.shape[0])]
        return (torch.from_numpy(np.stack([r[0] for r in results]).reshape(-1, size, 4)),
                torch.from_numpy(np.stack([r[1] for r in results]).reshape(-1, size)),
                torch.from_numpy(np.stack([r[2] for r in results]).reshape(-1, size)),
                torch.tensor([r[3] for r in results], dtype=torch.int32))
    return run


# --- crop_and_resize -------------------------------------------------------------------------
def crop_and_resize(image: torch.Tensor, boxes: torch.Tensor, box_ind: torch.Tensor, crop: tuple[int, int],
                    method: str, extrapolation: float) -> torch.Tensor:
    """TensorFlow's ``CropAndResize`` sampling (float32), differentiable by torch in
    ``image`` and (bilinear) ``boxes``."""
    _, height, width, _ = image.shape
    ch, cw = crop
    image = image.float()
    y1, x1, y2, x2 = (boxes[:, i:i + 1] for i in range(4))

    def coords(lo: torch.Tensor, hi: torch.Tensor, size: int, n: int) -> torch.Tensor:
        steps = torch.arange(n, dtype=torch.float32, device=boxes.device)[None]
        if n > 1:
            return lo * (size - 1) + steps * ((hi - lo) * (size - 1) / (n - 1))
        return (0.5 * (lo + hi) * (size - 1)).expand(-1, n)

    in_y, in_x = coords(y1, y2, height, ch), coords(x1, x2, width, cw)  # [b, ch], [b, cw]
    valid = ((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :]
    rows = image[box_ind.long()]  # [b, h, w, c]
    if method == "nearest":
        yi = _round_half_away(in_y).clamp(0, height - 1).long()
        xi = _round_half_away(in_x).clamp(0, width - 1).long()
        out = _pick(rows, yi, xi)
    else:
        ty = in_y.detach().floor().clamp(0, height - 1)
        tx = in_x.detach().floor().clamp(0, width - 1)
        by, rx = in_y.detach().ceil().clamp(0, height - 1), in_x.detach().ceil().clamp(0, width - 1)
        y_lerp, x_lerp = (in_y - ty)[:, :, None, None], (in_x - tx)[:, None, :, None]
        tl, tr = _pick(rows, ty.long(), tx.long()), _pick(rows, ty.long(), rx.long())
        bl, br = _pick(rows, by.long(), tx.long()), _pick(rows, by.long(), rx.long())
        top = tl + (tr - tl) * x_lerp
        bottom = bl + (br - bl) * x_lerp
        out = top + (bottom - top) * y_lerp
    fill = torch.full_like(out, float(extrapolation))
    return torch.where(valid[:, :, :, None], out, fill)


def _round_half_away(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _pick(rows: torch.Tensor, yi: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
    """``rows[b, yi[b, i], xi[b, j]]`` -> ``[b, len(yi), len(xi), c]``."""
    b = torch.arange(rows.shape[0], device=rows.device)[:, None, None]
    return rows[b, yi[:, :, None], xi[:, None, :]]


def _check_crop(ctx: KernelContext, image_shape: tuple, boxes: torch.Tensor, box_ind: torch.Tensor) -> None:
    if boxes.ndim != 2 or boxes.shape[1] != 4 or box_ind.shape != (boxes.shape[0],):
        raise InvalidArgumentError(f"CropAndResize ({ctx.op.name}): boxes must be [num_boxes, 4] and box_ind "
                                   f"[num_boxes], got {tuple(boxes.shape)} and {tuple(box_ind.shape)}")
    if box_ind.numel() and (int(box_ind.min()) < 0 or int(box_ind.max()) >= image_shape[0]):
        raise InvalidArgumentError(f"CropAndResize ({ctx.op.name}): box_ind has values outside [0, "
                                   f"{image_shape[0]}): {box_ind.tolist()}")


@kernel("CropAndResize")
def _crop_and_resize(ctx: KernelContext):
    method, extrapolation = ctx.attr("method"), ctx.attr("extrapolation_value", 0.0)

    def run(image: Any, boxes: Any, box_ind: Any, crop_size: Any) -> Any:
        if image.ndim != 4:
            raise InvalidArgumentError(f"CropAndResize ({ctx.op.name}): image must be 4-D, got {tuple(image.shape)}")
        _check_crop(ctx, tuple(image.shape), boxes, box_ind)
        crop = tuple(int(v) for v in crop_size.tolist())
        return crop_and_resize(image, boxes.float(), box_ind, crop, method, extrapolation)
    return run


@kernel("CropAndResizeGradImage")
def _crop_grad_image(ctx: KernelContext):
    method = ctx.attr("method")
    from flowmesh.kernels.contract.convert import torch_dtype

    dtype = torch_dtype(ctx.attr("T"))

    def run(grad: Any, boxes: Any, box_ind: Any, shape: Any) -> Any:
        dims = tuple(int(v) for v in shape.tolist())
        image = torch.zeros(dims, dtype=torch.float32, device=grad.device, requires_grad=True)
        with torch.enable_grad():
            out = crop_and_resize(image, boxes.float(), box_ind, tuple(grad.shape[1:3]), method, 0.0)
            (d_image,) = torch.autograd.grad(out, image, grad.float())
        return d_image.to(dtype)
    return run


@kernel("CropAndResizeGradBoxes")
def _crop_grad_boxes(ctx: KernelContext):
    def run(grad: Any, image: Any, boxes: Any, box_ind: Any) -> Any:
        b = boxes.float().detach().clone().requires_grad_(True)
        with torch.enable_grad():
            out = crop_and_resize(image.float(), b, box_ind, tuple(grad.shape[1:3]), "bilinear", 0.0)
            (d_boxes,) = torch.autograd.grad(out, b, grad.float())
        return d_boxes
    return run


def _proposals_one(scores: np.ndarray, deltas: np.ndarray, info: np.ndarray, anchors: np.ndarray,
                   threshold: float, pre: int, min_size: float, post: int) -> tuple[np.ndarray, np.ndarray]:
    """One image of ``GenerateBoundingBoxProposals`` (TensorFlow's GPU kernel, in float32)."""
    f = np.float32
    flat = scores.reshape(-1)
    order = np.argsort(-flat, kind="stable")[:min(pre, flat.size)]
    d, a = deltas.reshape(-1, 4)[order].astype(f), anchors.reshape(-1, 4)[order].astype(f)
    clip = f(np.log(1000.0 / 16.0))
    dy, dx, dh, dw = d[:, 0], d[:, 1], np.minimum(d[:, 2], clip), np.minimum(d[:, 3], clip)
    width, height = a[:, 3] - a[:, 1], a[:, 2] - a[:, 0]
    cx, cy = a[:, 1] + f(0.5) * width + width * dx, a[:, 0] + f(0.5) * height + height * dy
    pw, ph = width * np.exp(dw), height * np.exp(dh)
    img_h, img_w = f(info[0]), f(info[1])
    x1 = np.clip(cx - f(0.5) * pw, 0, img_w)
    x2 = np.clip(cx + f(0.5) * pw, 0, img_w)
    y1 = np.clip(cy - f(0.5) * ph, 0, img_h)
    y2 = np.clip(cy + f(0.5) * ph, 0, img_h)
    keep = np.minimum(x2 - x1, y2 - y1) >= f(min_size) * f(info[2])
    boxes = np.stack([y1, x1, y2, x2], 1)[keep]
    kept_scores = flat[order][keep].astype(f)
    chosen, _ = greedy_nms(iou_matrix(boxes), kept_scores, post, threshold, float("-inf"))
    rois, probs = np.zeros((post, 4), f), np.zeros(post, f)
    rois[:len(chosen)], probs[:len(chosen)] = boxes[chosen], kept_scores[chosen]
    return rois, probs


@kernel("GenerateBoundingBoxProposals", device_types=("CPU",))
def _generate_proposals(ctx: KernelContext):
    post = ctx.attr("post_nms_topn")

    def run(scores: Any, deltas: Any, info: Any, anchors: Any, threshold: Any, pre: Any, min_size: Any) -> tuple:
        s, d, i, a = _np(scores), _np(deltas), _np(info), _np(anchors)
        n, h, w, num_anchors = s.shape
        if d.shape != (n, h, w, 4 * num_anchors) or a.shape != (h, w, 4 * num_anchors) or i.shape != (n, 5):
            raise InvalidArgumentError(f"GenerateBoundingBoxProposals ({ctx.op.name}): with scores {s.shape}, "
                                       f"bbox_deltas must be {(n, h, w, 4 * num_anchors)}, anchors "
                                       f"{(h, w, 4 * num_anchors)} and image_info {(n, 5)}; got {d.shape}, "
                                       f"{a.shape}, {i.shape}")
        if not 0 <= float(threshold) <= 1 or int(pre) <= 0:
            raise InvalidArgumentError(f"GenerateBoundingBoxProposals ({ctx.op.name}): nms_threshold must be in "
                                       f"[0, 1] and pre_nms_topn > 0, got {float(threshold)} and {int(pre)}")
        out = [_proposals_one(s[k], d[k], i[k], a, float(threshold), int(pre), float(min_size), post)
               for k in range(n)]
        rois = np.stack([o[0] for o in out]) if out else np.zeros((0, post, 4), np.float32)
        probs = np.stack([o[1] for o in out]) if out else np.zeros((0, post), np.float32)
        return torch.from_numpy(rois), torch.from_numpy(probs)
    return run
