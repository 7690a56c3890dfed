"""Box ops of ``tf.image``: non-max suppression (``NonMaxSuppressionV3/V4/V5``,
``NonMaxSuppressionWithOverlaps``, ``CombinedNonMaxSuppression``), ``CropAndResize`` and its
gradients, ``DrawBoundingBoxesV2``, ``SampleDistortedBoundingBoxV2`` and ``ExtractGlimpseV2``,
with TensorFlow's op names, attributes and static shapes; kernels in
``kernels/image_box_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import constant_value, make_op, make_tensor


def _dims(t: Tensor, rank: int, op_type: str, what: str) -> list:
    if t.shape.rank is None:
        return [None] * rank
    if t.shape.rank != rank:
        raise InvalidArgumentError(f"{op_type}: {what} must be {rank}-D, got shape {t.shape}")
    return t.shape.as_list()


def _static_int(t: Tensor) -> int | None:
    value = constant_value(t)
    return None if value is None else int(value)


# --- non-max suppression ---------------------------------------------------------------------
def _nms_shape(op_type: str):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        boxes, scores, max_size = inputs[:3]
        if op_type == "NonMaxSuppressionWithOverlaps":
            _dims(boxes, 2, op_type, "overlaps")
        else:
            dims = _dims(boxes, 2, op_type, "boxes")
            if dims[1] not in (None, 4):
                raise InvalidArgumentError(f"{op_type}: boxes must have 4 columns, got shape {boxes.shape}")
        _dims(scores, 1, op_type, "scores")
        if max_size.shape.rank not in (None, 0):
            raise InvalidArgumentError(f"{op_type}: max_output_size must be a scalar, got shape {max_size.shape}")
        pad = attrs.get("pad_to_max_output_size", False)
        n = _static_int(max_size) if pad else None
        out = [(dtypes.int32, TensorShape([n]))]
        if op_type == "NonMaxSuppressionV5":
            out.append((scores.dtype, TensorShape([n])))
        if op_type in ("NonMaxSuppressionV4", "NonMaxSuppressionV5"):
            out.append((dtypes.int32, TensorShape([])))
        return out
    return shape_fn


for _type in ("NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
              "NonMaxSuppressionWithOverlaps"):
    register_op(_type, _nms_shape(_type), not_differentiable=True)


def _nms_inputs(boxes: Any, scores: Any, max_output_size: Any, thresholds: Sequence[Any]) -> list[Tensor]:
    """boxes, scores (float32 or float16), max_output_size (int32), thresholds (boxes' dtype)."""
    boxes_t = convert_to_tensor(boxes, name="boxes")
    if boxes_t.dtype not in (dtypes.float32, dtypes.float16):
        boxes_t = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
    scores_t = convert_to_tensor(scores, dtype=boxes_t.dtype, name="scores")
    size = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
    rest = [convert_to_tensor(t, dtype=boxes_t.dtype, name="threshold") for t in thresholds]
    return [boxes_t, scores_t, size, *rest]


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                        score_threshold: Any = float("-inf"), name: str | None = None) -> Tensor:
    """Indices (int32) of at most ``max_output_size`` boxes, greedily by score, dropping each box
    whose IoU with a kept one exceeds ``iou_threshold`` and those scoring <= ``score_threshold``
    (``NonMaxSuppressionV3``). ``boxes`` are ``[num_boxes, 4]`` corner pairs in any order."""
    with name_scope(name, "non_max_suppression"):
        inputs = _nms_inputs(boxes, scores, max_output_size, [iou_threshold, score_threshold])
        return make_tensor("NonMaxSuppressionV3", inputs, name="NonMaxSuppressionV3")


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any,
                                    iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                                    soft_nms_sigma: Any = 0.0,
                                    name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(selected_indices, selected_scores)``; ``soft_nms_sigma > 0`` is Soft-NMS (Bodla et
    al.): overlapping boxes' scores decay by ``exp(-iou**2 / (2 * sigma))`` instead of being
    dropped (``NonMaxSuppressionV5``)."""
    with name_scope(name, "non_max_suppression_with_scores"):
        inputs = _nms_inputs(boxes, scores, max_output_size, [iou_threshold, score_threshold, soft_nms_sigma])
        op = make_op("NonMaxSuppressionV5", inputs, {"pad_to_max_output_size": False},
                     name="NonMaxSuppressionV5")
        return op.outputs[0], op.outputs[1]


def non_max_suppression_padded_v1(boxes: Any, scores: Any, max_output_size: Any,
                                  iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                                  pad_to_max_output_size: bool = False,
                                  name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(selected_indices, valid_outputs)`` of ``NonMaxSuppressionV4``: with
    ``pad_to_max_output_size`` the indices are padded with zeros to ``max_output_size``."""
    with name_scope(name, "non_max_suppression_padded"):
        inputs = _nms_inputs(boxes, scores, max_output_size, [iou_threshold, score_threshold])
        op = make_op("NonMaxSuppressionV4", inputs,
                     {"pad_to_max_output_size": bool(pad_to_max_output_size)}, name="NonMaxSuppressionV4")
        return op.outputs[0], op.outputs[1]


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: Any,
                                 overlap_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                                 name: str | None = None) -> Tensor:
    """Greedy selection as :func:`non_max_suppression`, with a precomputed
    ``[num_boxes, num_boxes]`` similarity matrix instead of boxes."""
    with name_scope(name, "non_max_suppression_overlaps"):
        inputs = [convert_to_tensor(overlaps, dtype=dtypes.float32, name="overlaps"),
                  convert_to_tensor(scores, dtype=dtypes.float32, name="scores"),
                  convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size"),
                  convert_to_tensor(overlap_threshold, dtype=dtypes.float32, name="overlap_threshold"),
                  convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")]
        return make_tensor("NonMaxSuppressionWithOverlaps", inputs, name="NonMaxSuppressionWithOverlaps")


def _combined_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    boxes, scores, per_class, total = inputs[:4]
    bdims = _dims(boxes, 4, "CombinedNonMaxSuppression", "boxes")
    sdims = _dims(scores, 3, "CombinedNonMaxSuppression", "scores")
    if bdims[3] not in (None, 4):
        raise InvalidArgumentError(f"CombinedNonMaxSuppression: boxes must be [batch, num_boxes, q, 4], "
                                   f"got shape {boxes.shape}")
    batch = bdims[0] if bdims[0] is not None else sdims[0]
    size, per, classes = _static_int(total), _static_int(per_class), sdims[2]
    if attrs["pad_per_class"] and None not in (size, per, classes):
        size = min(size, per * classes)
    elif attrs["pad_per_class"]:
        size = None
    return [(dtypes.float32, TensorShape([batch, size, 4])), (dtypes.float32, TensorShape([batch, size])),
            (dtypes.float32, TensorShape([batch, size])), (dtypes.int32, TensorShape([batch]))]


register_op("CombinedNonMaxSuppression", _combined_shape, not_differentiable=True)


def combined_non_max_suppression(boxes: Any, scores: Any, max_output_size_per_class: Any,
                                 max_total_size: Any, iou_threshold: Any = 0.5,
                                 score_threshold: Any = float("-inf"), pad_per_class: bool = False,
                                 clip_boxes: bool = True, name: str | None = None) -> tuple:
    """Per-class greedy NMS over a batch, then the best ``max_total_size`` detections of each
    image: ``(nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)``, zero-padded.
    ``boxes`` is ``[batch, num_boxes, q, 4]`` (``q`` 1: boxes shared by every class)."""
    with name_scope(name, "combined_non_max_suppression"):
        inputs = [convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes"),
                  convert_to_tensor(scores, dtype=dtypes.float32, name="scores"),
                  convert_to_tensor(max_output_size_per_class, dtype=dtypes.int32, name="max_output_size_per_class"),
                  convert_to_tensor(max_total_size, dtype=dtypes.int32, name="max_total_size"),
                  convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold"),
                  convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")]
        op = make_op("CombinedNonMaxSuppression", inputs,
                     {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)},
                     name="CombinedNonMaxSuppression")
        return tuple(op.outputs)


# --- crop_and_resize -------------------------------------------------------------------------
def _crop_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    image, boxes, box_ind, crop_size = inputs
    idims = _dims(image, 4, "CropAndResize", "image")
    bdims = _dims(boxes, 2, "CropAndResize", "boxes")
    _dims(box_ind, 1, "CropAndResize", "box_ind")
    size = constant_value(crop_size)
    hw = [None, None] if size is None else [int(v) for v in size]
    if size is not None and min(hw) <= 0:
        raise InvalidArgumentError(f"CropAndResize: crop dimensions must be positive, got {hw}")
    return [(dtypes.float32, TensorShape([bdims[0], *hw, idims[3]]))]


def _crop_grad(op: Operation, grad: Tensor) -> list:
    image, boxes, box_ind, _ = op.inputs
    attrs = {"method": op.attrs["method"], "T": image.dtype}
    d_image = make_tensor("CropAndResizeGradImage", [grad, boxes, box_ind, array_ops.shape(image)], attrs,
                          name="CropAndResizeGradImage")
    d_boxes = None
    if op.attrs["method"] == "bilinear":
        d_boxes = make_tensor("CropAndResizeGradBoxes", [grad, image, boxes, box_ind], {"method": "bilinear"},
                              name="CropAndResizeGradBoxes")
    return [d_image, d_boxes, None, None]


register_op("CropAndResize", _crop_shape, grad=_crop_grad)
register_op("CropAndResizeGradImage",
            lambda inputs, attrs: [(attrs["T"], TensorShape([None, None, None, inputs[0].shape[3]]
                                                            if inputs[0].shape.rank == 4 else None))],
            not_differentiable=True)
register_op("CropAndResizeGradBoxes", lambda inputs, attrs: [(dtypes.float32, inputs[2].shape)],
            not_differentiable=True)


def crop_and_resize(image: Any, boxes: Any, box_ind: Any = None, crop_size: Any = None,
                    method: str = "bilinear", extrapolation_value: float = 0.0,
                    name: str | None = None, box_indices: Any = None) -> Tensor:
    """Crops of ``[batch, h, w, c]`` ``image`` at the normalized ``[y1, x1, y2, x2]`` ``boxes``
    of images ``box_ind``, each resampled (``bilinear`` or ``nearest``) to ``crop_size``
    ``[crop_height, crop_width]``; float32, ``[num_boxes, crop_height, crop_width, c]``.
    Samples outside the image take ``extrapolation_value``. Differentiable in ``image`` and
    (bilinear) ``boxes``."""
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'")
    box_ind = box_indices if box_ind is None else box_ind
    if box_ind is None or crop_size is None:
        raise TypeError("crop_and_resize() needs 'box_indices' (or 'box_ind') and 'crop_size'")
    if method not in ("bilinear", "nearest"):
        raise InvalidArgumentError(f"CropAndResize: method must be 'bilinear' or 'nearest', got {method!r}")
    inputs = [convert_to_tensor(image, name="image"), convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes"),
              convert_to_tensor(box_ind, dtype=dtypes.int32, name="box_ind"),
              convert_to_tensor(crop_size, dtype=dtypes.int32, name="crop_size")]
    return make_tensor("CropAndResize", inputs,
                       {"method": method, "extrapolation_value": float(extrapolation_value)},
                       name=name or "CropAndResize")


# --- drawing, sampling, glimpses -------------------------------------------------------------
register_op("DrawBoundingBoxesV2", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
            not_differentiable=True)


def draw_bounding_boxes(images: Any, boxes: Any, name: str | None = None, colors: Any = None) -> Tensor:
    """``images`` (``[batch, h, w, depth]``, float) with the outline of each normalized
    ``[y_min, x_min, y_max, x_max]`` box of ``boxes`` ``[batch, num_boxes, 4]`` drawn on it,
    cycling through ``colors`` (``[num_colors, 4]`` RGBA; TensorFlow's table when None)."""
    images_t = convert_to_tensor(images, name="images")
    if images_t.dtype not in (dtypes.float32, dtypes.float16):
        raise TypeError(f"DrawBoundingBoxes: images must be float32 or float16, got {images_t.dtype.name}")
    dims = _dims(images_t, 4, "DrawBoundingBoxes", "images")
    if dims[3] not in (None, 1, 3, 4):
        raise InvalidArgumentError(f"DrawBoundingBoxes: channel depth should be 1, 3 or 4, got shape {images_t.shape}")
    boxes_t = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
    _dims(boxes_t, 3, "DrawBoundingBoxes", "boxes")
    colors_t = convert_to_tensor([] if colors is None else colors, dtype=dtypes.float32, name="colors")
    if colors is None:
        from flowmesh.ops import array_ops

        colors_t = array_ops.reshape(colors_t, [0, 4])
    return make_tensor("DrawBoundingBoxesV2", [images_t, boxes_t, colors_t], name=name or "DrawBoundingBoxesV2")


def _sample_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dtype = inputs[0].dtype
    return [(dtype, TensorShape([3])), (dtype, TensorShape([3])), (dtypes.float32, TensorShape([1, 1, 4]))]


register_op("SampleDistortedBoundingBoxV2", _sample_shape, not_differentiable=True, stateful=True)


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: int | None = None,
                                  seed2: int | None = None, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Sequence[float] | None = None,
                                  area_range: Sequence[float] | None = None, max_attempts: int | None = None,
                                  use_image_if_no_bounding_boxes: bool | None = None,
                                  name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """A random crop ``(begin, size, bboxes)`` of an image of ``image_size`` ``[h, w, c]``
    covering at least ``min_object_covered`` of one of ``bounding_boxes``
    (``[batch, N, 4]`` normalized), with an aspect ratio in ``aspect_ratio_range`` (default
    ``[0.75, 1.33]``) and a relative area in ``area_range`` (default ``[0.05, 1]``); after
    ``max_attempts`` (100) failures, the whole image. TensorFlow's algorithm; the draws are
    not TensorFlow's (Philox) stream."""
    size = convert_to_tensor(image_size, name="image_size")
    if size.dtype not in (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64):
        raise TypeError(f"SampleDistortedBoundingBoxV2: image_size must be an integer tensor, got {size.dtype.name}")
    attrs = {"seed": int(seed or 0), "seed2": int(seed2 or 0),
             "aspect_ratio_range": [float(v) for v in (aspect_ratio_range or (0.75, 1.33))],
             "area_range": [float(v) for v in (area_range or (0.05, 1.0))],
             "max_attempts": int(100 if max_attempts is None else max_attempts),
             "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes)}
    if len(attrs["aspect_ratio_range"]) != 2 or len(attrs["area_range"]) != 2:
        raise InvalidArgumentError("SampleDistortedBoundingBoxV2: aspect_ratio_range and area_range need 2 values")
    with name_scope(name, "sample_distorted_bounding_box"):
        inputs = [size, convert_to_tensor(bounding_boxes, dtype=dtypes.float32, name="bounding_boxes"),
                  convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")]
        op = make_op("SampleDistortedBoundingBoxV2", inputs, attrs, name="SampleDistortedBoundingBoxV2")
        return op.outputs[0], op.outputs[1], op.outputs[2]


def _glimpse_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    image, size = inputs[:2]
    dims = _dims(image, 4, "ExtractGlimpse", "input")
    value = constant_value(size)
    hw = [None, None] if value is None else [int(v) for v in value]
    return [(dtypes.float32, TensorShape([dims[0], *hw, dims[3]]))]


register_op("ExtractGlimpseV2", _glimpse_shape, not_differentiable=True, stateful=True)


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True,  # noqa: A002 - TF's name
                    normalized: bool = True, uniform_noise: bool = True, name: str | None = None,
                    noise: str | None = None) -> Tensor:
    """The ``size`` ``[h, w]`` window of each image of ``input`` (``[batch, H, W, C]``
    float32) at ``offsets`` ``[batch, 2]`` (``y, x`` of its centre: normalized to [-1, 1]
    around the image centre by default); pixels outside the image are noise (``uniform``
    within each channel's range, ``gaussian`` with its mean/stddev, or ``zero``)."""
    if noise is None:
        noise = "uniform" if uniform_noise else "gaussian"
    if noise not in ("uniform", "gaussian", "zero"):
        raise InvalidArgumentError(f"ExtractGlimpse: noise must be 'uniform', 'gaussian' or 'zero', got {noise!r}")
    inputs = [convert_to_tensor(input, dtype=dtypes.float32, name="input"),
              convert_to_tensor(size, dtype=dtypes.int32, name="size"),
              convert_to_tensor(offsets, dtype=dtypes.float32, name="offsets")]
    attrs = {"centered": bool(centered), "normalized": bool(normalized), "noise": noise}
    return make_tensor("ExtractGlimpseV2", inputs, attrs, name=name or "ExtractGlimpse")


def _proposals_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    scores, deltas, info, anchors = inputs[:4]
    _dims(scores, 4, "GenerateBoundingBoxProposals", "scores")
    _dims(deltas, 4, "GenerateBoundingBoxProposals", "bbox_deltas")
    _dims(info, 2, "GenerateBoundingBoxProposals", "image_info")
    _dims(anchors, 3, "GenerateBoundingBoxProposals", "anchors")
    if attrs["post_nms_topn"] <= 0:
        raise InvalidArgumentError("GenerateBoundingBoxProposals: post_nms_topn can't be 0 or less")
    n, top = scores.shape[0], attrs["post_nms_topn"]
    return [(dtypes.float32, TensorShape([n, top, 4])), (dtypes.float32, TensorShape([n, top]))]


register_op("GenerateBoundingBoxProposals", _proposals_shape, not_differentiable=True)
