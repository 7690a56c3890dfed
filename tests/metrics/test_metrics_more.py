"""The rest of tf.compat.v1.metrics against TensorFlow: counts and ratios at thresholds,
sensitivity/specificity operating points, mean_tensor, cosine distance, relative error,
percentage_below, mean_iou and the top-k family (dense, vector and sparse labels, class_id,
weights), over three batches, with the local variables' names; and tf.sets."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(11)
BATCHES = [{"labels": RNG.integers(0, 2, 6).astype(np.int64), "scores": RNG.random(6).astype(np.float32),
            "weights": RNG.random(6).astype(np.float32), "classes": RNG.integers(0, 5, (6, 2)).astype(np.int64),
            "logits": RNG.random((6, 5)).astype(np.float32), "vectors": RNG.normal(size=(6, 3)).astype(np.float32)}
           for _ in range(3)]
for _b in BATCHES:
    _b["classes"][0, 1] = 7  # out of range: never predicted, counts as a miss
    _b["vectors"] /= np.linalg.norm(_b["vectors"], axis=1, keepdims=True)


def _sparse(t, classes):
    """Row i keeps its first (i % 2) + 1 labels."""
    keep = t.less(t.tile([[0, 1]], [6, 1]), t.reshape(t.range(6) % 2 + 1, [6, 1]))
    return t.SparseTensor(t.where(keep), t.boolean_mask(classes, keep), t.constant([6, 2], t.int64))


CASES = {
    "tp_at_thresholds": lambda t, p: t.metrics.true_positives_at_thresholds(p["lab"], p["sc"], [0.2, 0.5, 0.9]),
    "fp_at_thresholds_w": lambda t, p: t.metrics.false_positives_at_thresholds(p["lab"], p["sc"], [0.5], p["w"]),
    "tn_at_thresholds": lambda t, p: t.metrics.true_negatives_at_thresholds(p["lab"], p["sc"], [0.3, 0.7]),
    "fn_at_thresholds": lambda t, p: t.metrics.false_negatives_at_thresholds(p["lab"], p["sc"], [0.3, 0.7]),
    "precision_at_thresholds": lambda t, p: t.metrics.precision_at_thresholds(p["lab"], p["sc"], [0.1, 0.6]),
    "recall_at_thresholds_w": lambda t, p: t.metrics.recall_at_thresholds(p["lab"], p["sc"], [0.1, 0.6], p["w"]),
    "sensitivity": lambda t, p: t.metrics.sensitivity_at_specificity(p["lab"], p["sc"], 0.6, num_thresholds=20),
    "specificity_w": lambda t, p: t.metrics.specificity_at_sensitivity(p["lab"], p["sc"], 0.4, p["w"], 20),
    "mean_tensor_w": lambda t, p: t.metrics.mean_tensor(t.reshape(p["sc"], [3, 2]), t.reshape(p["w"], [3, 2])),
    "cosine": lambda t, p: t.metrics.mean_cosine_distance(p["vec"], t.reverse(p["vec"], [0]), dim=1),
    "relative_error": lambda t, p: t.metrics.mean_relative_error(t.cast(p["lab"], t.float32), p["sc"],
                                                                 t.round(p["sc"] * 2)),
    "percentage_below_w": lambda t, p: t.metrics.percentage_below(p["sc"], 0.4, p["w"]),
    "mean_iou": lambda t, p: t.metrics.mean_iou(p["cls"][:, 0], t.argmax(p["log"], 1), 8),
    "mean_iou_w": lambda t, p: t.metrics.mean_iou(p["cls"][:, 0], t.argmax(p["log"], 1), 8, weights=p["w"]),
    "recall_at_2": lambda t, p: t.metrics.recall_at_k(p["cls"], p["log"], 2),
    "recall_at_1_vector_w": lambda t, p: t.metrics.recall_at_k(p["cls"][:, 0], p["log"], 1, weights=p["w"]),
    "recall_at_3_class": lambda t, p: t.metrics.recall_at_k(p["cls"], p["log"], 3, class_id=2),
    "recall_at_top_k_sparse": lambda t, p: t.metrics.recall_at_top_k(_sparse(t, p["cls"]), t.nn.top_k(p["log"], 2)[1]),
    "precision_at_2": lambda t, p: t.metrics.precision_at_k(p["cls"], p["log"], 2),
    "precision_at_3_class_w": lambda t, p: t.metrics.sparse_precision_at_k(p["cls"], p["log"], 3, class_id=1,
                                                                           weights=p["w"]),
    "precision_at_2_sparse": lambda t, p: t.metrics.precision_at_k(_sparse(t, p["cls"]), p["log"], 2),
    "precision_at_top_k": lambda t, p: t.metrics.precision_at_top_k(p["cls"], t.nn.top_k(p["log"], 3)[1], k=3),
    "average_precision_at_3": lambda t, p: t.metrics.average_precision_at_k(p["cls"], p["log"], 3),
    "average_precision_at_2_w": lambda t, p: t.metrics.sparse_average_precision_at_k(p["cls"], p["log"], 2, p["w"]),
    "average_precision_sparse": lambda t, p: t.metrics.average_precision_at_k(_sparse(t, p["cls"]), p["log"], 3),
}


def _run(tf, build, config=None):
    with tf.Graph().as_default():
        holders = {"lab": tf.placeholder(tf.int64, [6]), "sc": tf.placeholder(tf.float32, [6]),
                   "w": tf.placeholder(tf.float32, [6]), "cls": tf.placeholder(tf.int64, [6, 2]),
                   "log": tf.placeholder(tf.float32, [6, 5]), "vec": tf.placeholder(tf.float32, [6, 3])}
        value, update = build(tf, holders)
        names = sorted(v.name for v in tf.local_variables())
        out = []
        keys = {"lab": "labels", "sc": "scores", "w": "weights", "cls": "classes", "log": "logits", "vec": "vectors"}
        with tf.Session(config=config) as sess:
            sess.run(tf.local_variables_initializer())
            for batch in BATCHES:
                out.append(sess.run(update, {holders[k]: batch[v] for k, v in keys.items()}))
                out.append(sess.run(value))
        return out, names


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case):
    tf1 = require_tensorflow()
    ours, our_names = _run(fm, CASES[case])
    theirs, their_names = _run(tf1, CASES[case], session_config(tf1))
    assert our_names == their_names
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_sets_match_tensorflow():
    tf1 = require_tensorflow()
    a = np.array([[[1, 2, 3], [4, 4, 5]], [[7, 8, 9], [1, 1, 1]]], np.int64)
    b = np.array([[[2, 3, 6], [5, 0, 0]], [[9, 7, 1], [2, 3, 4]]], np.int64)

    def run(t, config=None):
        with t.Graph().as_default():
            x, y = t.constant(a), t.constant(b)
            sb = t.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 2]], t.constant([3, 10, 1, 2], t.int64),
                                [2, 2, 3])
            outs = [t.sets.set_intersection(x, y), t.sets.set_union(x, y), t.sets.set_difference(x, y),
                    t.sets.difference(x, y, aminusb=False), t.sets.intersection(x, sb), t.sets.difference(sb, x),
                    t.sets.union(sb, sb), t.sets.set_difference(x, sb),
                    t.sets.intersection(t.constant([[b"a", b"b"], [b"c", b"d"]]),
                                        t.constant([[b"b", b"x"], [b"d", b"c"]]))]
            sizes = [t.sets.set_size(o) for o in outs[:3]] + [t.sets.size(sb)]
            with t.Session(config=config) as sess:
                return sess.run(outs), sess.run(sizes)
    (ours, our_sizes), (theirs, their_sizes) = run(fm), run(tf1, session_config(tf1))
    for x, y in zip(ours, theirs):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    for x, y in zip(our_sizes, their_sizes):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def test_bad_arguments():
    with fm.Graph().as_default():
        with pytest.raises(ValueError, match="specificity"):
            fm.metrics.sensitivity_at_specificity(fm.zeros([3]), fm.zeros([3]), 1.5)
        with pytest.raises(ValueError, match="Invalid k"):
            fm.metrics.average_precision_at_k(fm.zeros([3, 2], fm.int64), fm.zeros([3, 4]), 0)
        with pytest.raises(TypeError, match="integer or string"):
            fm.sets.set_intersection(fm.zeros([2, 2]), fm.zeros([2, 2]))
