"""``tf.image.non_max_suppression_padded`` (TensorFlow's tiled, batched algorithm, written
with graph ops the same way, so the selections agree: a box is suppressed at IoU >=
``iou_threshold``, boxes are processed in tiles of ``tile_size``) and
``tf.image.generate_bounding_box_proposals`` (Faster R-CNN's region proposals)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import (
    array_ops,
    cast_ops,
    cond,
    gather_ops,
    manip_ops,
    math_ops,
    nn_impl,
    range_ops,
    reduction_ops,
    select_ops,
    sort_ops,
    while_loop,
)
from flowmesh.ops._builders import make_op


def _overlap(a: Tensor, b: Tensor) -> Tensor:
    """IoU ``[batch, n, m]`` of canonical boxes ``a`` ``[batch, n, 4]`` and ``b``."""
    ay0, ax0, ay1, ax1 = array_ops.split(a, 4, axis=2)
    by0, bx0, by1, bx1 = array_ops.split(b, 4, axis=2)
    t = [0, 2, 1]
    ix0 = math_ops.maximum(ax0, array_ops.transpose(bx0, t))
    ix1 = math_ops.minimum(ax1, array_ops.transpose(bx1, t))
    iy0 = math_ops.maximum(ay0, array_ops.transpose(by0, t))
    iy1 = math_ops.minimum(ay1, array_ops.transpose(by1, t))
    inter = math_ops.maximum(ix1 - ix0, 0) * math_ops.maximum(iy1 - iy0, 0)
    area_a = (ay1 - ay0) * (ax1 - ax0)
    area_b = (by1 - by0) * (bx1 - bx0)
    return inter / (area_a + array_ops.transpose(area_b, t) - inter + 1e-8)


def _self_suppression(iou: Tensor, _: Tensor, iou_sum: Tensor, threshold: Tensor) -> list:
    batch = array_ops.shape(iou)[0]
    can_suppress = cast_ops.cast(array_ops.reshape(reduction_ops.reduce_max(iou, 1) < threshold, [batch, -1, 1]),
                                 iou.dtype)
    after = array_ops.reshape(cast_ops.cast(reduction_ops.reduce_max(can_suppress * iou, 1) < threshold, iou.dtype),
                              [batch, -1, 1]) * iou
    new_sum = reduction_ops.reduce_sum(after, [1, 2])
    return [after, reduction_ops.reduce_any(iou_sum - new_sum > threshold), new_sum, threshold]


def _loop_body(boxes: Tensor, threshold: Tensor, output_size: Tensor, idx: Tensor, tile: int) -> tuple:
    num_tiles = array_ops.shape(boxes)[1] // tile
    batch = array_ops.shape(boxes)[0]

    def cross(all_boxes: Tensor, box_slice: Tensor, thr: Tensor, inner: Tensor) -> tuple:
        other = manip_ops.slice(all_boxes, array_ops.stack([0, inner * tile, 0]), array_ops.stack([batch, tile, 4]))
        iou = _overlap(other, box_slice)
        kept = array_ops.expand_dims(cast_ops.cast(reduction_ops.reduce_all(iou < thr, [1]), box_slice.dtype), 2)
        return all_boxes, kept * box_slice, thr, inner + 1

    box_slice = manip_ops.slice(boxes, array_ops.stack([0, idx * tile, 0]), array_ops.stack([batch, tile, 4]))
    _, box_slice, _, _ = while_loop.while_loop(lambda _b, _s, _t, inner: inner < idx, cross,
                                               [boxes, box_slice, threshold, convert_to_tensor(0)])
    iou = _overlap(box_slice, box_slice)
    upper = array_ops.expand_dims(array_ops.reshape(range_ops.range(tile), [1, -1])
                                  > array_ops.reshape(range_ops.range(tile), [-1, 1]), 0)
    iou *= cast_ops.cast(math_ops.logical_and(upper, iou >= threshold), iou.dtype)
    suppressed, _, _, _ = while_loop.while_loop(
        lambda _i, go, _s, _t: go, _self_suppression,
        [iou, convert_to_tensor(True), reduction_ops.reduce_sum(iou, [1, 2]), threshold])
    dropped = reduction_ops.reduce_sum(suppressed, 1) > 0
    box_slice *= array_ops.expand_dims(1.0 - cast_ops.cast(dropped, box_slice.dtype), 2)
    mask = array_ops.reshape(cast_ops.cast(math_ops.equal(range_ops.range(num_tiles), idx), boxes.dtype), [1, -1, 1, 1])
    boxes = (manip_ops.tile(array_ops.expand_dims(box_slice, 1), array_ops.stack([1, num_tiles, 1, 1])) * mask
             + array_ops.reshape(boxes, array_ops.stack([batch, num_tiles, tile, 4])) * (1 - mask))
    boxes = array_ops.reshape(boxes, array_ops.stack([batch, -1, 4]))
    output_size += reduction_ops.reduce_sum(
        cast_ops.cast(reduction_ops.reduce_any(box_slice > 0, [2]), dtypes.int32), [1])
    return boxes, threshold, output_size, idx + 1


def _canonical(boxes: Tensor) -> Tensor:
    y1, x1, y2, x2 = array_ops.split(boxes, 4, axis=2)
    y_first = reduction_ops.reduce_all(math_ops.less_equal(y1[0, 0, 0], y2[0, 0, 0]))
    y_min, y_max = cond.cond(y_first, lambda: (y1, y2), lambda: (y2, y1))
    x_first = reduction_ops.reduce_all(math_ops.less_equal(x1[0, 0, 0], x2[0, 0, 0]))
    x_min, x_max = cond.cond(x_first, lambda: (x1, x2), lambda: (x2, x1))
    return array_ops.concat([y_min, x_min, y_max, x_max], axis=2)


def _padded_v2(boxes: Tensor, scores: Tensor, max_output_size: Any, iou_threshold: Any, score_threshold: float,
               sorted_input: bool, canonicalized: bool, tile: int) -> tuple[Tensor, Tensor]:
    batch_dims = array_ops.shape(boxes)[:-2]
    num_boxes = array_ops.shape(boxes)[-2]
    boxes = array_ops.reshape(boxes, array_ops.stack([-1, num_boxes, 4]))
    scores = array_ops.reshape(scores, array_ops.stack([-1, num_boxes]))
    batch = array_ops.shape(boxes)[0]
    if score_threshold != float("-inf"):
        with name_scope("filter_by_score"):
            score_mask = cast_ops.cast(scores > score_threshold, scores.dtype)
            scores *= score_mask
            boxes *= array_ops.expand_dims(cast_ops.cast(score_mask, boxes.dtype), 2)
    if not canonicalized:
        with name_scope("canonicalize_coordinates"):
            boxes = _canonical(boxes)
    if not sorted_input:
        order = sort_ops.argsort(scores, axis=1, direction="DESCENDING")
        scores = gather_ops.gather(scores, order, axis=1, batch_dims=1)
        boxes = gather_ops.gather(boxes, order, axis=1, batch_dims=1)
    max_size = convert_to_tensor(max_output_size, dtype=dtypes.int32)
    pad = cast_ops.cast(math_ops.ceil(cast_ops.cast(math_ops.maximum(num_boxes, max_size), dtypes.float32)
                                      / float(tile)), dtypes.int32) * tile - num_boxes
    boxes = manip_ops.pad(cast_ops.cast(boxes, dtypes.float32), array_ops.stack([[0, 0], [0, pad], [0, 0]]))
    boxes.set_shape([None, None, 4])
    padded_count = num_boxes + pad
    iterations = padded_count // tile
    selected, _, output_size, _ = while_loop.while_loop(
        lambda _b, _t, size, i: math_ops.logical_and(reduction_ops.reduce_min(size) < max_size, i < iterations),
        lambda b, t, size, i: _loop_body(b, t, size, i, tile),
        [boxes, convert_to_tensor(iou_threshold, dtype=dtypes.float32), array_ops.zeros([batch], dtypes.int32),
         convert_to_tensor(0)],
        shape_invariants=[TensorShape([None, None, 4]), TensorShape([]), TensorShape([None]), TensorShape([])])
    num_valid = math_ops.minimum(output_size, max_size)
    ranked = cast_ops.cast(reduction_ops.reduce_any(selected > 0, [2]), dtypes.int32) * array_ops.expand_dims(
        range_ops.range(padded_count, 0, -1), 0)
    idx = padded_count - cast_ops.cast(nn_impl.top_k(ranked, max_size)[0], dtypes.int32)
    idx = math_ops.minimum(idx, num_boxes - 1)
    if not sorted_input:
        offsets = range_ops.range(batch) * num_boxes
        flat = array_ops.reshape(idx + array_ops.expand_dims(offsets, 1), [-1])
        idx = array_ops.reshape(gather_ops.gather(array_ops.reshape(order, [-1]), flat), array_ops.stack([batch, -1]))
    position = array_ops.expand_dims(range_ops.range(max_size), 0)
    idx = select_ops.where(position < array_ops.expand_dims(num_valid, 1), idx,
                           array_ops.zeros(array_ops.stack([batch, max_size]), dtypes.int32))
    return idx, array_ops.reshape(num_valid, batch_dims)


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                               score_threshold: float = float("-inf"), pad_to_max_output_size: bool = False,
                               name: str | None = None, sorted_input: bool = False,
                               canonicalized_coordinates: bool = False, tile_size: int = 512) -> tuple[Tensor, Tensor]:
    """``(selected_indices, num_valid)``: greedy NMS of ``boxes`` ``[..., num_boxes, 4]`` by
    ``scores`` ``[..., num_boxes]``; batched inputs need ``pad_to_max_output_size``, which
    pads the indices with zeros to ``max_output_size``."""
    with name_scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        scores = convert_to_tensor(scores, name="scores")
        if not pad_to_max_output_size and boxes.shape.rank is not None and boxes.shape.rank > 2:
            raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched "
                             "input")
        idx, num_valid = _padded_v2(boxes, scores, max_output_size, iou_threshold, score_threshold, sorted_input,
                                    canonicalized_coordinates, tile_size)
        if not pad_to_max_output_size:
            return idx[0, :num_valid], num_valid
        shape = array_ops.concat([array_ops.shape(boxes)[:-2],
                                  array_ops.expand_dims(convert_to_tensor(max_output_size, dtype=dtypes.int32), 0)], 0)
        return array_ops.reshape(idx, shape), num_valid


def generate_bounding_box_proposals(scores: Any, bbox_deltas: Any, image_info: Any, anchors: Any,
                                    nms_threshold: Any = 0.7, pre_nms_topn: Any = 6000, min_size: Any = 16,
                                    post_nms_topn: int = 300, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Region proposals ``(rois, roi_probabilities)``, ``[num_images, post_nms_topn, 4]`` and
    ``[num_images, post_nms_topn]`` (zero-padded): the ``pre_nms_topn`` best-scoring anchors
    (``scores`` ``[n, h, w, a]``, ``anchors`` ``[h, w, 4a]`` ``[y1, x1, y2, x2]``) moved by
    ``bbox_deltas`` ``[n, h, w, 4a]`` (``dy, dx, dh, dw``), clipped to the image (``image_info``
    ``[n, 5]``: height, width, scale), those narrower than ``min_size * scale`` dropped, then
    NMS at ``nms_threshold``. TensorFlow has this op on GPUs only; flowmesh runs it anywhere."""
    inputs = [convert_to_tensor(scores, dtype=dtypes.float32, name="scores"),
              convert_to_tensor(bbox_deltas, dtype=dtypes.float32, name="bbox_deltas"),
              convert_to_tensor(image_info, dtype=dtypes.float32, name="image_info"),
              convert_to_tensor(anchors, dtype=dtypes.float32, name="anchors"),
              convert_to_tensor(nms_threshold, dtype=dtypes.float32, name="nms_threshold"),
              convert_to_tensor(pre_nms_topn, dtype=dtypes.int32, name="pre_nms_topn"),
              convert_to_tensor(min_size, dtype=dtypes.float32, name="min_size")]
    op = make_op("GenerateBoundingBoxProposals", inputs, {"post_nms_topn": int(post_nms_topn)},
                 name=name or "GenerateBoundingBoxProposals")
    return op.outputs[0], op.outputs[1]
