"""Reductions, arg-max/min, cumulative and segment ops: the oracle table."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

X = Input((2, 3, 2))


def logsumexp(x, axis=None, keepdims=False):
    peak = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)
DISTINCT = Input((2, 3, 2), kind="distinct")


def _reduce(name, ref, axis, keepdims=False, inp=X, **kw):
    tag = f"{name}/axis{axis}{'_keep' if keepdims else ''}".replace(" ", "")
    return OpSpec(tag, lambda tf, x: getattr(tf, name)(x, axis=axis, keepdims=keepdims), (inp,),
                  reference=lambda x: ref(x, axis=None if axis is None else tuple(np.atleast_1d(axis)),
                                          keepdims=keepdims), **kw)


REDUCTIONS = [
    _reduce("reduce_sum", np.sum, None, second_order=True),
    _reduce("reduce_sum", np.sum, 1, second_order=True),
    _reduce("reduce_sum", np.sum, [0, 2], keepdims=True),
    _reduce("reduce_sum", np.sum, -1),
    _reduce("reduce_mean", np.mean, None),
    _reduce("reduce_mean", np.mean, 1, keepdims=True, second_order=True),
    _reduce("reduce_mean", np.mean, [0, -1]),
    _reduce("reduce_max", np.max, 1, inp=DISTINCT),
    _reduce("reduce_max", np.max, None, inp=DISTINCT),
    _reduce("reduce_min", np.min, [0, 2], keepdims=True, inp=DISTINCT),
    _reduce("reduce_prod", np.prod, 1, second_order=True),
    _reduce("reduce_prod", np.prod, None),
    OpSpec("reduce_max/ties_split_gradient", lambda tf, x: tf.reduce_max(x, axis=1),
           (Input(maker=lambda rng: np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])),),
           reference=lambda x: x.max(1), tags=("no-fd",), grad=False),
    OpSpec("reduce_prod/with_zeros", lambda tf, x: tf.reduce_prod(x, axis=1),
           (Input(maker=lambda rng: np.array([[0.0, 3.0, 2.0], [0.0, 0.0, 2.0], [1.5, -2.0, 0.5]])),),
           reference=lambda x: x.prod(1)),
    OpSpec("reduce_sum/int32", lambda tf, x: tf.reduce_sum(x, axis=0), (Input((3, 2), "int32", -5, 5, "int"),),
           reference=lambda x: x.sum(0)),
    OpSpec("reduce_mean/int32_truncates", lambda tf, x: tf.reduce_mean(x),
           (Input(maker=lambda rng: np.array([1, 2, 4]), dtype="int32"),), reference=lambda x: np.int32(2)),
    OpSpec("reduce_any_all", lambda tf, x: [tf.reduce_any(x, 1), tf.reduce_all(x, 1), tf.reduce_any(x)],
           (Input((3, 4), "bool", kind="bool"),),
           reference=lambda x: [x.any(1), x.all(1), x.any()]),
    OpSpec("reduce_sum/reduction_indices", lambda tf, x: tf.reduce_sum(x, reduction_indices=[1], keep_dims=True),
           (X,), reference=lambda x: x.sum(1, keepdims=True)),
    OpSpec("reduce_logsumexp", lambda tf, x: tf.reduce_logsumexp(x, axis=1), (X,),
           reference=lambda x: logsumexp(x, axis=1), second_order=True),
    OpSpec("reduce_logsumexp/large_keepdims", lambda tf, x: tf.reduce_logsumexp(x * 100.0, keepdims=True),
           (X,), reference=lambda x: logsumexp(x * 100.0, keepdims=True)),
    OpSpec("reduce_variance", lambda tf, x: tf.math.reduce_variance(x, axis=[0, 1]), (X,),
           reference=lambda x: x.var(axis=(0, 1))),
    OpSpec("reduce_std", lambda tf, x: tf.math.reduce_std(x, axis=-1, keepdims=True), (X,),
           reference=lambda x: x.std(axis=-1, keepdims=True)),
    OpSpec("reduce_euclidean_norm", lambda tf, x: tf.math.reduce_euclidean_norm(x, axis=1), (X,),
           reference=lambda x: np.sqrt((x ** 2).sum(1))),
    OpSpec("count_nonzero", lambda tf, x: [tf.count_nonzero(x, axis=1), tf.math.count_nonzero(x, dtype=tf.int32)],
           (Input((3, 4), "int32", -1, 2, "int"),),
           reference=lambda x: [np.count_nonzero(x, axis=1).astype(np.int64), np.int32(np.count_nonzero(x))]),
    OpSpec("argmax_argmin", lambda tf, x: [tf.argmax(x, 1), tf.argmin(x, axis=0, output_type=tf.int32),
                                           tf.argmax(x, -1)], (DISTINCT,),
           reference=lambda x: [x.argmax(1), x.argmin(0).astype(np.int32), x.argmax(-1)]),
]

CUMULATIVE = [
    OpSpec("cumsum", lambda tf, x: tf.cumsum(x, axis=1), (X,), reference=lambda x: np.cumsum(x, 1),
           second_order=True),
    OpSpec("cumsum/exclusive_reverse", lambda tf, x: tf.cumsum(x, axis=-1, exclusive=True, reverse=True), (X,),
           reference=lambda x: np.flip(np.cumsum(np.flip(x, -1), -1), -1) - x),
    OpSpec("cumprod", lambda tf, x: tf.cumprod(x, axis=1), (Input((2, 3), kind="nonzero", low=0.5),),
           reference=lambda x: np.cumprod(x, 1)),
    OpSpec("cumprod/exclusive", lambda tf, x: tf.math.cumprod(x, axis=0, exclusive=True),
           (Input((3, 2), kind="nonzero", low=0.5),),
           reference=lambda x: np.concatenate([np.ones((1, 2), x.dtype), np.cumprod(x, 0)[:-1]])),
]

IDS = Input(maker=lambda rng: np.array([0, 2, 0, 3, 2]), dtype="int32")
SORTED_IDS = Input(maker=lambda rng: np.array([0, 0, 1, 3, 3]), dtype="int32")
NEG_IDS = Input(maker=lambda rng: np.array([1, -1, 0, 1, 3]), dtype="int64")
DATA = Input((5, 2), kind="distinct")


def _segments(data, ids, n, fn, empty):
    out = np.full((n,) + data.shape[1:], empty, dtype=data.dtype)
    for k in range(n):
        rows = data[ids == k]
        if len(rows):
            out[k] = fn(rows, axis=0)
    return out


SEGMENTS = [
    OpSpec("unsorted_segment_sum", lambda tf, d, i: tf.unsorted_segment_sum(d, i, 4), (DATA, IDS),
           reference=lambda d, i: _segments(d, i, 4, np.sum, 0)),
    OpSpec("unsorted_segment_sum/negative_ids", lambda tf, d, i: tf.math.unsorted_segment_sum(d, i, 4),
           (DATA, NEG_IDS), reference=lambda d, i: _segments(d, i, 4, np.sum, 0)),
    OpSpec("unsorted_segment_max", lambda tf, d, i: tf.math.unsorted_segment_max(d, i, 3),
           (DATA, Input(maker=lambda rng: np.array([0, 2, 0, 1, 2]), dtype="int32")),
           reference=lambda d, i: _segments(d, i, 3, np.max, 0)),
    OpSpec("unsorted_segment_min/empty_segment", lambda tf, d, i: tf.math.unsorted_segment_min(d, i, 4),
           (DATA, IDS), reference=lambda d, i: _segments(d, i, 4, np.min, np.finfo(np.float32).max),
           grad=False),
    OpSpec("unsorted_segment_min", lambda tf, d, i: tf.math.unsorted_segment_min(d, i, 3),
           (DATA, Input(maker=lambda rng: np.array([2, 2, 0, 1, 0]), dtype="int64")),
           reference=lambda d, i: _segments(d, i, 3, np.min, 0)),
    OpSpec("unsorted_segment_prod", lambda tf, d, i: tf.math.unsorted_segment_prod(d, i, 4),
           (Input((5, 2), kind="nonzero", low=0.5), IDS), reference=lambda d, i: _segments(d, i, 4, np.prod, 1)),
    OpSpec("unsorted_segment_mean", lambda tf, d, i: tf.math.unsorted_segment_mean(d, i, 5), (DATA, IDS),
           reference=lambda d, i: _segments(d, i, 5, np.mean, 0)),
    OpSpec("unsorted_segment_sqrt_n", lambda tf, d, i: tf.math.unsorted_segment_sqrt_n(d, i, 4), (DATA, IDS),
           reference=lambda d, i: _segments(d, i, 4, lambda r, axis: r.sum(axis) / np.sqrt(len(r)), 0)),
    OpSpec("segment_sum", lambda tf, d, i: tf.math.segment_sum(d, i), (DATA, SORTED_IDS),
           reference=lambda d, i: _segments(d, i, 4, np.sum, 0)),
    OpSpec("segment_mean", lambda tf, d, i: tf.math.segment_mean(d, i), (DATA, SORTED_IDS),
           reference=lambda d, i: _segments(d, i, 4, np.mean, 0)),
    OpSpec("segment_max", lambda tf, d, i: tf.math.segment_max(d, i), (DATA, SORTED_IDS),
           reference=lambda d, i: _segments(d, i, 4, np.max, 0)),
    OpSpec("segment_min", lambda tf, d, i: tf.math.segment_min(d, i), (DATA, SORTED_IDS),
           reference=lambda d, i: _segments(d, i, 4, np.min, 0)),
    OpSpec("segment_prod", lambda tf, d, i: tf.math.segment_prod(d, i), (DATA, SORTED_IDS),
           reference=lambda d, i: _segments(d, i, 4, np.prod, 1), grad=False),
]

SPECS = REDUCTIONS + CUMULATIVE + SEGMENTS
ORACLE_SPECS = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_reduction_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE_SPECS, ids=spec_ids(ORACLE_SPECS))
def test_reduction_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean"])
@pytest.mark.parametrize("shape,axis,static", [
    ([None], 0, True),             # the Keras loss: a sum over the unknown batch axis
    ([None, 3], 0, True),          # kept axis known
    ([None, 3], 1, False),         # kept axis unknown: the shape is computed at run time
    ([None, None, 2], [0, 1], True),
])
def test_reduction_gradient_over_unknown_axes(name, shape, axis, static):
    """With the rank and axes known and every kept axis known, the gradient reshapes to a
    constant shape (no Shape/Range/FloorMod chain); values match NumPy either way."""
    import flowmesh as tf

    concrete = [d or 4 for d in shape]
    x = np.arange(np.prod(concrete), dtype=np.float32).reshape(concrete)
    axes = tuple(np.atleast_1d(axis))
    reduced_shape = np.sum(x, axis=axes).shape
    weight = np.arange(1, np.prod(reduced_shape) + 1, dtype=np.float32).reshape(reduced_shape)
    with tf.Graph().as_default() as graph:
        p = tf.placeholder(tf.float32, shape)
        w = tf.placeholder(tf.float32, None)
        reduced = getattr(tf, name)(p, axis=axis)
        grad = tf.gradients(reduced * w, p)[0]
        types = {op.type for op in graph.get_operations()}
        with tf.Session() as sess:
            got = sess.run(grad, {p: x, w: weight})
    want = np.broadcast_to(np.expand_dims(weight, axes), x.shape).astype(np.float64)
    if name == "reduce_mean":
        want = want / np.prod([x.shape[a] for a in axes])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert ("FloorMod" not in types) == static


def test_max_min_over_no_elements_give_the_identity_as_in_tensorflow():
    tf1 = require_tensorflow()
    results = []
    for tf in (flowmesh, tf1):
        with tf.Graph().as_default() as graph:
            fetches = [tf.reduce_max(tf.zeros([0])), tf.reduce_min(tf.zeros([0], tf.float64)),
                       tf.reduce_max(tf.zeros([0], tf.int64)), tf.reduce_min(tf.zeros([0], tf.int32)),
                       tf.reduce_max(tf.zeros([2, 0]), axis=1, keepdims=True), tf.reduce_min(tf.zeros([0, 3]), axis=1)]
            with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
                results.append(sess.run(fetches))
    for ours, theirs in zip(*results):
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype
        np.testing.assert_array_equal(ours, theirs)
