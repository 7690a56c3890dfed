"""Manipulation and n-d indexing ops (slice, pad, tile, one_hot, gather_nd ...): oracle table."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

M = Input((3, 4))
X = Input((2, 3, 2))


def _const(values, dtype="int32"):
    return Input(maker=lambda rng: np.array(values), dtype=dtype)


def _tf_pad(x, p, mode):
    return np.pad(x, p, mode={"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


def _reverse_sequence(x, lengths):
    out = x.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = x[b, :n][::-1]
    return out


def _one_hot(indices, depth, on=1.0, off=0.0):
    out = np.full(indices.shape + (depth,), off, np.float32)
    for pos, i in np.ndenumerate(indices):
        if 0 <= i < depth:
            out[pos + (i,)] = on
    return out


def _scatter_nd(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    for pos in np.ndindex(indices.shape[:-1]):
        out[tuple(indices[pos])] += updates[pos]
    return out


MANIP = [
    OpSpec("slice", lambda tf, x: tf.slice(x, [1, 0], [2, -1]), (M,), reference=lambda x: x[1:3, :],
           second_order=True),
    OpSpec("slice/tensor_begin", lambda tf, x, b: tf.slice(x, b, [1, 2, 2]), (X, _const([1, 1, 0])),
           reference=lambda x, b: x[1:2, 1:3, 0:2]),
    OpSpec("pad/constant", lambda tf, x: tf.pad(x, [[1, 0], [2, 1]]), (M,),
           reference=lambda x: _tf_pad(x, [[1, 0], [2, 1]], "CONSTANT"), second_order=True),
    OpSpec("pad/constant_values", lambda tf, x: tf.pad(x, [[0, 1], [1, 1]], constant_values=-3.0), (M,),
           reference=lambda x: np.pad(x, [[0, 1], [1, 1]], constant_values=-3.0)),
    OpSpec("pad/reflect", lambda tf, x: tf.pad(x, [[2, 1], [1, 3]], mode="REFLECT"), (M,),
           reference=lambda x: _tf_pad(x, [[2, 1], [1, 3]], "REFLECT"), second_order=True),
    OpSpec("pad/symmetric", lambda tf, x: tf.pad(x, [[0, 1], [1, 2], [2, 2]], mode="symmetric"), (X,),
           reference=lambda x: _tf_pad(x, [[0, 1], [1, 2], [2, 2]], "SYMMETRIC")),
    OpSpec("tile", lambda tf, x: tf.tile(x, [2, 1, 3]), (X,), reference=lambda x: np.tile(x, [2, 1, 3]),
           second_order=True),
    OpSpec("tile/tensor_multiples", lambda tf, x, m: tf.tile(x, m), (M, _const([1, 2]))),
    OpSpec("reverse", lambda tf, x: tf.reverse(x, [0, -1]), (X,), reference=lambda x: x[::-1, :, ::-1]),
    OpSpec("reverse_sequence", lambda tf, x, n: tf.reverse_sequence(x, n, seq_axis=1, batch_axis=0),
           (Input((3, 4, 2)), _const([4, 0, 2], "int64")), reference=_reverse_sequence),
    OpSpec("reverse_sequence/batch_after_seq", lambda tf, x, n: tf.reverse_sequence(x, n, seq_axis=0, batch_axis=1),
           (Input((4, 3)), _const([1, 3, 4], "int64")),
           reference=lambda x, n: _reverse_sequence(x.T, n).T),
    OpSpec("roll", lambda tf, x: tf.roll(x, shift=[1, -2], axis=[0, 1]), (M,),
           reference=lambda x: np.roll(x, (1, -2), (0, 1))),
    OpSpec("one_hot", lambda tf, i: tf.one_hot(i, 4), (_const([[0, 3], [5, -1]]),),
           reference=lambda i: _one_hot(i, 4)),
    OpSpec("one_hot/axis0_values", lambda tf, i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
           (_const([2, 0, 1, 1], "int64"),),
           reference=lambda i: np.moveaxis(_one_hot(i, 3, 5, -1), -1, 0).astype(np.int32)),
    OpSpec("sequence_mask", lambda tf, n: [tf.sequence_mask(n), tf.sequence_mask(n, 5, dtype=tf.float32)],
           (_const([1, 3, 0]),),
           reference=lambda n: [np.arange(3) < n[:, None], (np.arange(5) < n[:, None]).astype(np.float32)]),
    OpSpec("meshgrid/xy", lambda tf, a, b: tf.meshgrid(a, b), (Input((3,)), Input((2,))),
           reference=lambda a, b: np.meshgrid(a, b)),
    OpSpec("meshgrid/ij", lambda tf, a, b, c: tf.meshgrid(a, b, c, indexing="ij"),
           (Input((2,)), Input((3,)), Input((2,))), reference=lambda a, b, c: np.meshgrid(a, b, c, indexing="ij")),
    OpSpec("unique", lambda tf, x: tf.unique(x), (_const([4, 1, 4, 2, 1, 7]),),
           reference=lambda x: [np.array([4, 1, 2, 7]), np.array([0, 1, 0, 2, 1, 3], np.int32)]),
    OpSpec("unique_with_counts", lambda tf, x: tf.unique_with_counts(x, out_idx=tf.int64),
           (_const([3.0, 1.0, 3.0, 3.0], "float32"),),
           reference=lambda x: [np.array([3.0, 1.0], np.float32), np.array([0, 1, 0, 0]), np.array([3, 1])],
           grad=False),
    OpSpec("linspace", lambda tf, a, b: tf.linspace(a, b, 5), (Input(()), Input(())),
           reference=lambda a, b: np.linspace(a, b, 5)),
    OpSpec("linspace/single", lambda tf, a, b: tf.lin_space(a, b, 1), (Input(()), Input(())),
           reference=lambda a, b: np.linspace(a, b, 1)),
    OpSpec("range", lambda tf, n: [tf.range(n), tf.range(1, 7, 2), tf.range(5.0, 1.0, -1.5)], (_const(4),),
           reference=lambda n: [np.arange(4, dtype=np.int32), np.arange(1, 7, 2, dtype=np.int32),
                                np.arange(5.0, 1.0, -1.5, dtype=np.float32)]),
    OpSpec("shape_helpers", lambda tf, x: tf.shape_n([x, x[0]]) + [tf.broadcast_dynamic_shape([2, 1], [3])],
           (M,), reference=lambda x: [np.array([3, 4], np.int32), np.array([4], np.int32),
                                      np.array([2, 3], np.int32)]),
    OpSpec("ensure_shape", lambda tf, x: tf.ensure_shape(x, [None, 4]) * 2.0, (M,), reference=lambda x: x * 2),
    OpSpec("repeat/vector_axis", lambda tf, x: tf.repeat(x, [2, 0, 1], axis=0), (Input((3, 2)),),
           reference=lambda x: np.repeat(x, [2, 0, 1], axis=0)),
    OpSpec("repeat/scalar_flat", lambda tf, x: tf.repeat(x, 3), (Input((2, 2)),),
           reference=lambda x: np.repeat(x, 3)),
    OpSpec("repeat/axis1_tensor_counts", lambda tf, x, n: tf.repeat(x, n, axis=1), (M, _const([1, 3, 0, 2])),
           reference=lambda x, n: np.repeat(x, n, axis=1)),
    OpSpec("sort", lambda tf, x: [tf.sort(x), tf.sort(x, axis=0, direction="DESCENDING")],
           (Input((3, 4), kind="distinct"),),
           reference=lambda x: [np.sort(x, -1), -np.sort(-x, 0)]),
    OpSpec("argsort", lambda tf, x: [tf.argsort(x), tf.argsort(x, axis=0, direction="DESCENDING")],
           (Input(maker=lambda rng: np.array([[3, 1, 3], [-2**31, 2**31 - 1, 0]]), dtype="int32"),),
           reference=lambda x: [np.argsort(x, -1, kind="stable").astype(np.int32),
                                np.argsort(-x.astype(np.int64), 0, kind="stable").astype(np.int32)]),
    OpSpec("batch_gather", lambda tf, x, i: tf.batch_gather(x, i), (Input((2, 4)), _const([[3, 0, 3], [1, 1, 2]])),
           reference=lambda x, i: np.take_along_axis(x, i, 1)),
    OpSpec("invert_permutation", lambda tf, p: tf.invert_permutation(p), (_const([2, 0, 3, 1]),),
           reference=lambda p: np.argsort(p).astype(np.int32)),
]

ND_INDEX = [
    OpSpec("gather_nd/elements", lambda tf, x, i: tf.gather_nd(x, i), (M, _const([[0, 1], [2, 3], [0, 1]])),
           reference=lambda x, i: x[i[:, 0], i[:, 1]], second_order=True),
    OpSpec("gather_nd/rows_indexed_slices", lambda tf, x, i: tf.gather_nd(x, i), (M, _const([[2], [0], [2]])),
           reference=lambda x, i: x[i[:, 0]]),
    OpSpec("gather_nd/slices", lambda tf, x, i: tf.gather_nd(x, i), (X, _const([[[1, 2]], [[0, 0]]], "int64")),
           reference=lambda x, i: x[i[..., 0], i[..., 1]]),
    OpSpec("scatter_nd", lambda tf, i, u: tf.scatter_nd(i, u, [4, 3]), (_const([[1], [3], [1]]), Input((3, 3))),
           reference=lambda i, u: _scatter_nd(i, u, (4, 3)), second_order=True),
    OpSpec("scatter_nd/elements", lambda tf, i, u: tf.scatter_nd(i, u, [2, 3]),
           (_const([[0, 2], [1, 1]]), Input((2,))), reference=lambda i, u: _scatter_nd(i, u, (2, 3))),
    OpSpec("tensor_scatter_nd_update", lambda tf, t, i, u: tf.tensor_scatter_nd_update(t, i, u),
           (M, _const([[2], [0]]), Input((2, 4))),
           reference=lambda t, i, u: np.concatenate([u[1:2], t[1:2], u[0:1]])),
    OpSpec("tensor_scatter_nd_add", lambda tf, t, i, u: tf.tensor_scatter_nd_add(t, i, u),
           (M, _const([[2, 1], [2, 1]]), Input((2,))),
           reference=lambda t, i, u: t + _scatter_nd(i, u, t.shape)),
    OpSpec("tensor_scatter_nd_sub", lambda tf, t, i, u: tf.tensor_scatter_nd_sub(t, i, u),
           (M, _const([[0, 0], [1, 3]]), Input((2,))),
           reference=lambda t, i, u: t - _scatter_nd(i, u, t.shape)),
    OpSpec("tensor_scatter_nd_max", lambda tf, t, i, u: tf.tensor_scatter_nd_max(t, i, u),
           (Input((4, 2), kind="distinct"), _const([[0], [2], [0]]), Input((3, 2), kind="distinct", low=-1.9, high=1.9))),
    OpSpec("tensor_scatter_nd_min", lambda tf, t, i, u: tf.tensor_scatter_nd_min(t, i, u),
           (Input((4, 2), kind="distinct"), _const([[0], [2], [0]]), Input((3, 2), kind="distinct", low=-1.9, high=1.9))),
]

SPECS = MANIP + ND_INDEX
ORACLE_SPECS = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_manip_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE_SPECS, ids=spec_ids(ORACLE_SPECS))
def test_manip_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())
