"""tf.image's box ops against TensorFlow: non-max suppression (plain, with scores and Soft-NMS,
padded, from overlaps, combined per class), crop_and_resize with its gradients,
draw_bounding_boxes, extract_glimpse; sample_distorted_bounding_box's constraints and the
region proposals on a hand-checked case."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from tests.image.helpers import assert_same, run_both, run_flowmesh

_RNG = np.random.RandomState(1)
_CORNERS = _RNG.uniform(0, 1, (12, 2)).astype(np.float32)
_BOXES = np.concatenate([_CORNERS, _CORNERS + _RNG.uniform(0.1, 0.4, (12, 2))], 1).astype(np.float32)
_BOXES[3] = _BOXES[3][[2, 3, 0, 1]]  # corners in the other order
_SCORES = (_RNG.permutation(12) / 12).astype(np.float32)
_IMAGES = _RNG.uniform(0, 1, (2, 7, 9, 3)).astype(np.float32)


def test_non_max_suppression_family_matches_tensorflow():
    def build(t, boxes, scores):
        return [t.image.non_max_suppression(boxes, scores, 5, 0.3),
                t.image.non_max_suppression(boxes, scores, 20, 0.5, 0.3),
                *t.image.non_max_suppression_with_scores(boxes, scores, 6, 0.5, soft_nms_sigma=0.5),
                *t.image.non_max_suppression_with_scores(boxes, scores, 6, 0.4, 0.2),
                *t.image.non_max_suppression_padded(boxes, scores, 5, 0.4),
                *t.image.non_max_suppression_padded(boxes[None], scores[None], 8, 0.4, pad_to_max_output_size=True),
                t.image.non_max_suppression_overlaps(t.matmul(boxes, boxes, transpose_b=True), scores, 4, 0.6)]
    ours, theirs = run_both(build, _BOXES, _SCORES)
    assert_same(ours, theirs, rtol=1e-6, atol=1e-6)


def test_combined_non_max_suppression_matches_tensorflow():
    boxes = np.concatenate([_RNG.uniform(-0.1, 0.7, (2, 6, 3, 2)), _RNG.uniform(0.9, 1.2, (2, 6, 3, 2))],
                           -1).astype(np.float32)
    scores = _RNG.uniform(0, 1, (2, 6, 3)).astype(np.float32)
    ours, theirs = run_both(lambda t, b, s: [
        *t.image.combined_non_max_suppression(b, s, 2, 5, 0.5, 0.1),
        *t.image.combined_non_max_suppression(b[:, :, :1], s, 3, 20, 0.5, pad_per_class=True, clip_boxes=False)],
        boxes, scores)
    assert_same(ours, theirs, rtol=1e-6, atol=1e-6)


def test_crop_and_resize_and_its_gradients_match_tensorflow():
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, 0.6, 0.2, 0.1], [-0.2, -0.1, 1.3, 1.2], [0.3, 0.3, 0.3, 0.3]],
                     np.float32)
    weights = np.arange(4 * 4 * 5 * 3).reshape(4, 4, 5, 3).astype(np.float32)

    def build(t, image, bx):
        bilinear = t.image.crop_and_resize(image, bx, [0, 1, 1, 0], [4, 5])
        nearest = t.image.crop_and_resize(image, bx, box_indices=[0, 1, 1, 0], crop_size=[3, 1], method="nearest",
                                          extrapolation_value=-1)
        return [bilinear, nearest, *t.gradients(t.reduce_sum(bilinear * weights), [image, bx]),
                t.gradients(t.reduce_sum(nearest * nearest), image)[0]]
    ours, theirs = run_both(build, _IMAGES, boxes)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-4)
    with tf.Graph().as_default():
        assert tf.image.crop_and_resize(tf.zeros([2, 7, 9, 3]), tf.zeros([5, 4]), tf.zeros([5], tf.int32),
                                        [4, 6]).shape.as_list() == [5, 4, 6, 3]


def test_draw_bounding_boxes_and_extract_glimpse_match_tensorflow():
    boxes = np.array([[[0.1, 0.2, 0.8, 0.9], [0.5, -0.6, 1.2, 0.7]], [[0.0, 0.0, 1.0, 1.0], [0.6, 0.6, 0.2, 0.2]]],
                     np.float32)
    ours, theirs = run_both(lambda t, im, bx: [
        t.image.draw_bounding_boxes(im, bx), t.image.draw_bounding_boxes(im[..., :1], bx),
        t.image.draw_bounding_boxes(im, bx, colors=[[0.1, 0.2, 0.3, 1.0]])], _IMAGES, boxes)
    assert_same(ours, theirs)
    # windows inside the image (outside is noise in both); offsets centred, normalized or pixels
    offsets = np.array([[0.1, -0.2], [-0.4, 0.3]], np.float32)
    ours, theirs = run_both(lambda t, im, o: [
        t.image.extract_glimpse(im, [3, 4], o), t.image.extract_glimpse(im, [2, 2], o + 3.0, centered=False,
                                                                        normalized=False),
        t.image.extract_glimpse(im, [3, 3], o * 4, centered=True, normalized=False)], _IMAGES, offsets)
    assert_same(ours, theirs)
    edge = run_flowmesh(lambda t, im: t.image.extract_glimpse(im, [3, 3], [[-1.0, -1.0]] * 2, noise="zero"),
                        _IMAGES)[0]
    np.testing.assert_array_equal(edge[:, 0], 0)
    np.testing.assert_array_equal(edge[:, 1:, 1:], _IMAGES[:, :2, :2])


def test_sample_distorted_bounding_box_meets_its_constraints():
    box = [0.1, 0.2, 0.5, 0.6]
    with tf.Graph().as_default():
        begin, size, bbox = tf.image.sample_distorted_bounding_box([40, 60, 3], [[box]], seed=3,
                                                                   min_object_covered=0.5, area_range=(0.1, 1.0))
        assert [t.shape.as_list() for t in (begin, size, bbox)] == [[3], [3], [1, 1, 4]]
        whole = tf.image.sample_distorted_bounding_box(tf.constant([40, 60, 3]), tf.zeros([1, 0, 4]), seed=1,
                                                       use_image_if_no_bounding_boxes=True, area_range=(0.2, 0.5))
        refused = tf.image.sample_distorted_bounding_box([40, 60, 3], tf.zeros([1, 0, 4]))
        with tf.Session() as sess:
            for _ in range(5):
                (y, x, c), (h, w, d), norm = sess.run([begin, size, bbox])
                assert (c, d) == (0, -1) and 0 <= y and y + h <= 40 and 0 <= x and x + w <= 60
                assert 0.1 * 2400 <= h * w <= 2400 and 0.75 <= w / h <= 1.34
                cover = max(0, min(20, y + h) - max(4, y)) * max(0, min(36, x + w) - max(12, x)) / (16 * 24)
                assert cover >= 0.5
                np.testing.assert_allclose(norm[0, 0], [y / 40, x / 60, (y + h) / 40, (x + w) / 60], rtol=1e-6)
                _, (h, w, _), _ = sess.run(whole)
                assert 0.2 * 2400 <= h * w <= 0.5 * 2400 or (h, w) == (40, 60)
            with pytest.raises(InvalidArgumentError, match="use_image_if_no_bounding_boxes"):
                sess.run(refused)


def test_generate_bounding_box_proposals_decodes_clips_filters_and_suppresses():
    # TensorFlow has this op on GPUs only: the expected boxes are worked out by hand
    scores = np.array([[[[0.9, 0.2]], [[0.8, 0.7]]]], np.float32)  # [1, h=2, w=1, a=2]
    anchors = np.array([[[0, 0, 10, 10, 0, 0, 4, 4]], [[0, 0, 10, 10, 20, 20, 30, 30]]], np.float32)
    deltas = np.zeros((1, 2, 1, 8), np.float32)
    deltas[0, 0, 0, :4] = [0.1, 0.2, 0.0, np.log(2.0)]  # moved by (1, 2), twice as wide
    info = np.array([[25, 25, 1, 0, 0]], np.float32)
    rois, probs = run_flowmesh(lambda t, s, d: t.image.generate_bounding_box_proposals(
        s, d, info, anchors, nms_threshold=0.5, min_size=5, post_nms_topn=4), scores, deltas)
    # box 0: centre (6, 7), 10 x 20 -> [1, -3, 11, 17] clipped to [1, 0, 11, 17]; box (1, a=0) is
    # [0, 0, 10, 10], IoU with box 0 = 90 / 180 = 0.5, kept; (1, a=1) clipped to [20, 20, 25, 25];
    # (0, a=1) is 4 wide, dropped by min_size
    np.testing.assert_allclose(rois[0], [[1, 0, 11, 17], [0, 0, 10, 10], [20, 20, 25, 25], [0, 0, 0, 0]],
                               atol=1e-5)
    np.testing.assert_allclose(probs[0], [0.9, 0.8, 0.7, 0.0])
