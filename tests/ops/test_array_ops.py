"""Array ops (shapes, joining, splitting, gathering, slicing): the oracle table."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

X = Input((2, 3, 4))
M = Input((4, 3))


def _idx(values, dtype="int32"):
    return Input(maker=lambda rng: np.array(values), dtype=dtype)


SHAPES = [
    OpSpec("identity", lambda tf, x: tf.identity(x), (M,), reference=lambda x: x, second_order=True),
    OpSpec("reshape", lambda tf, x: tf.reshape(x, [3, -1]), (X,), reference=lambda x: x.reshape(3, -1),
           second_order=True),
    OpSpec("reshape/autopacked_dynamic", lambda tf, x: tf.reshape(x, [tf.shape(x)[0], -1]), (X,),
           reference=lambda x: x.reshape(2, -1)),
    OpSpec("shape_size_rank", lambda tf, x: [tf.shape(x), tf.size(x), tf.rank(x), tf.shape(x, out_type=tf.int64)],
           (X,), reference=lambda x: [np.array(x.shape, np.int32), np.int32(x.size), np.int32(x.ndim),
                                      np.array(x.shape, np.int64)]),
    OpSpec("expand_dims", lambda tf, x: [tf.expand_dims(x, 1), tf.expand_dims(x, -1)], (M,),
           reference=lambda x: [x[:, None], x[..., None]]),
    OpSpec("squeeze", lambda tf, x: [tf.squeeze(x), tf.squeeze(x, axis=[2])], (Input((2, 1, 1, 3)),),
           reference=lambda x: [x.squeeze(), x.squeeze(2)], dynamic=False),
    OpSpec("transpose", lambda tf, x: tf.transpose(x, [2, 0, 1]), (X,),
           reference=lambda x: x.transpose(2, 0, 1), second_order=True),
    OpSpec("transpose/default_perm", lambda tf, x: tf.transpose(x), (X,), reference=lambda x: x.T),
    OpSpec("zeros_ones_like", lambda tf, x: [tf.zeros_like(x) + x, tf.ones_like(x) * x,
                                             tf.zeros_like(x, dtype=tf.int32)], (M,),
           reference=lambda x: [x, x, np.zeros(x.shape, np.int32)]),
    OpSpec("fill", lambda tf, v: tf.fill([2, 3], v), (Input(()),), reference=lambda v: np.full((2, 3), v)),
    OpSpec("zeros_ones", lambda tf, x: [tf.zeros([2, 3], dtype=x.dtype) + x,
                                                tf.ones([2, 3], dtype=tf.int32)], (Input((3,)),),
           reference=lambda x: [np.zeros((2, 3), np.float32) + x, np.ones((2, 3), np.int32)]),
    OpSpec("broadcast_to", lambda tf, x: tf.broadcast_to(x, [4, 2, 3]), (Input((2, 1)),),
           reference=lambda x: np.broadcast_to(x, (4, 2, 3))),
]

JOIN_SPLIT = [
    OpSpec("concat", lambda tf, a, b: tf.concat([a, b], 1), (Input((2, 3)), Input((2, 2))),
           reference=lambda a, b: np.concatenate([a, b], 1), second_order=True),
    OpSpec("concat/negative_axis", lambda tf, a, b, c: tf.concat([a, b, c], -1),
           (Input((2, 1)), Input((2, 2)), Input((2, 3))), reference=lambda a, b, c: np.concatenate([a, b, c], -1)),
    OpSpec("stack", lambda tf, a, b: tf.stack([a, b], axis=1), (M, M), reference=lambda a, b: np.stack([a, b], 1)),
    OpSpec("stack/negative_axis", lambda tf, a, b: tf.stack([a, b], axis=-1), (M, M),
           reference=lambda a, b: np.stack([a, b], -1)),
    OpSpec("unstack", lambda tf, x: tf.unstack(x, axis=1), (X,), reference=lambda x: list(np.moveaxis(x, 1, 0)),
           dynamic=False),
    OpSpec("unstack/partial_use", lambda tf, x: tf.unstack(x, num=4, axis=-1)[2], (X,),
           reference=lambda x: x[..., 2]),
    OpSpec("split/equal", lambda tf, x: tf.split(x, 2, axis=2), (X,), reference=lambda x: np.split(x, 2, 2)),
    OpSpec("split/sizes", lambda tf, x: tf.split(x, [1, -1, 2], axis=-1), (X,),
           reference=lambda x: np.split(x, [1, 2], -1)),
    OpSpec("split/partial_use", lambda tf, x: tf.split(x, 3, axis=1)[1], (X,), reference=lambda x: x[:, 1:2]),
]

GATHER = [
    OpSpec("gather/axis0_indexed_slices", lambda tf, x, i: tf.gather(x, i), (M, _idx([3, 0, 3])),
           reference=lambda x, i: x[i], second_order=True),
    OpSpec("gather/matrix_indices", lambda tf, x, i: tf.gather(x, i), (M, _idx([[1, 2], [2, 0]], "int64")),
           reference=lambda x, i: x[i]),
    OpSpec("gather/axis1", lambda tf, x, i: tf.gather(x, i, axis=1), (X, _idx([[2, 0], [1, 2]])),
           reference=lambda x, i: np.take(x, i, axis=1)),
    OpSpec("gather/axis_last", lambda tf, x, i: tf.gather(x, i, axis=-1), (X, _idx([2, 2, 0], "int64")),
           reference=lambda x, i: np.take(x, i, axis=-1)),
    OpSpec("gather/batch_dims", lambda tf, x, i: tf.gather(x, i, axis=1, batch_dims=1),
           (Input((2, 4, 3)), _idx([[0, 3, 3], [1, 2, 0]])),
           reference=lambda x, i: np.stack([x[b][i[b]] for b in range(2)])),
    OpSpec("boolean_mask", lambda tf, x, m: tf.boolean_mask(x, m), (M, _idx([True, False, True, True], "bool")),
           reference=lambda x, m: x[m]),
    OpSpec("boolean_mask/2d_mask", lambda tf, x, m: tf.boolean_mask(x, m),
           (Input((2, 3, 2)), _idx([[True, False, True], [False, True, True]], "bool")),
           reference=lambda x, m: x[m], dynamic=False),
]

SLICING = [
    OpSpec("getitem/basic", lambda tf, x: x[1:3, 0], (M,), reference=lambda x: x[1:3, 0], second_order=True),
    OpSpec("getitem/negative_stride", lambda tf, x: x[::-1, 2:0:-1], (M,), reference=lambda x: x[::-1, 2:0:-1]),
    OpSpec("getitem/ellipsis_newaxis", lambda tf, x: x[..., None, 1:], (X,), reference=lambda x: x[..., None, 1:]),
    OpSpec("getitem/shrink_negative", lambda tf, x: x[-1, ..., -2], (X,), reference=lambda x: x[-1, ..., -2]),
    OpSpec("getitem/newaxis_first", lambda tf, x: x[tf.newaxis, :, 1], (M,), reference=lambda x: x[None, :, 1]),
    OpSpec("getitem/out_of_range_clamps", lambda tf, x: x[1:100, -100:2], (M,), reference=lambda x: x[1:100, -100:2]),
    OpSpec("getitem/empty", lambda tf, x: x[3:1], (M,), reference=lambda x: x[3:1]),
    OpSpec("getitem/step", lambda tf, x: x[::2, ::-2], (Input((5, 4)),), reference=lambda x: x[::2, ::-2]),
    OpSpec("getitem/tensor_index", lambda tf, x, i: x[i, 1:], (M, _idx(2)), reference=lambda x, i: x[i, 1:]),
    OpSpec("getitem/tensor_bounds", lambda tf, x, i: x[i:i + 2], (M, _idx(1)), reference=lambda x, i: x[i:i + 2]),
    OpSpec("strided_slice/masks", lambda tf, x: tf.strided_slice(
        x, [0, 1, 0], [2, 3, 0], [1, 1, 1], begin_mask=1, end_mask=4, shrink_axis_mask=1), (X,),
        reference=lambda x: x[0, 1:3, :]),
    OpSpec("strided_slice/ellipsis_mask", lambda tf, x: tf.strided_slice(
        x, [0, 1], [0, 3], [1, 1], ellipsis_mask=1), (X,), reference=lambda x: x[..., 1:3]),
    OpSpec("strided_slice/new_axis_mask", lambda tf, x: tf.strided_slice(
        x, [0, 1], [0, 2], [1, 1], new_axis_mask=1), (M,), reference=lambda x: x[None, 1:2]),
    OpSpec("strided_slice/negative_stride_masks", lambda tf, x: tf.strided_slice(
        x, [-1, 0], [0, 3], [-1, 2], end_mask=1), (M,), reference=lambda x: x[::-1, 0:3:2]),
]

SPECS = SHAPES + JOIN_SPLIT + GATHER + SLICING
ORACLE_SPECS = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_array_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE_SPECS, ids=spec_ids(ORACLE_SPECS))
def test_array_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_stop_gradient_blocks_the_gradient():
    import flowmesh as tf

    x = tf.placeholder(tf.float32, [3])
    y = tf.stop_gradient(x) * x
    grad = tf.gradients(y, x)[0]
    assert tf.gradients(tf.stop_gradient(x), x) == [None]
    with tf.Session() as sess:
        value = np.array([1.0, -2.0, 3.0], np.float32)
        np.testing.assert_allclose(sess.run(grad, {x: value}), value)  # only the direct path


def test_zeros_and_ones_take_a_list_holding_tensors():
    """tf.zeros([tf.shape(x)[0], 2]) (a TF1 idiom) packs the list, as TensorFlow does."""
    import flowmesh as tf

    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3])
        z, o = tf.zeros([tf.shape(x)[0], 2]), tf.ones((2, tf.shape(x)[0]), tf.int64)
        assert z.shape.as_list() == [None, 2] and o.dtype == tf.int64
        a, b = sess.run([z, o], {x: np.ones((4, 3), np.float32)})
    assert a.shape == (4, 2) and not a.any() and b.shape == (2, 4) and (b == 1).all()
