"""space/batch/depth moves, search and counting ops, special functions and TF 1.x spellings:
the oracle table (values vs NumPy and TensorFlow; gradients where differentiable)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

IMG = Input((2, 4, 6, 3))
INTS = Input((7,), "int32", 0, 6, kind="int")


def _s2d(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, b * b * c)


SPECS = [
    OpSpec("space_to_depth", lambda tf, x: tf.space_to_depth(x, 2), (IMG,), reference=lambda x: _s2d(x, 2),
           second_order=True),
    OpSpec("space_to_depth/nchw", lambda tf, x: tf.nn.space_to_depth(x, 2, data_format="NCHW"),
           (Input((1, 3, 4, 4)),), oracle=False,
           reference=lambda x: _s2d(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)),
    OpSpec("depth_to_space", lambda tf, x: tf.depth_to_space(x, 2), (Input((2, 2, 3, 8)),)),
    OpSpec("space_to_batch_nd", lambda tf, x: tf.space_to_batch_nd(x, [2, 3], [[0, 0], [1, 2]]), (IMG,)),
    OpSpec("space_to_batch_nd/1d", lambda tf, x: tf.space_to_batch_nd(x, [2], [[1, 1]]), (Input((2, 4, 3)),)),
    OpSpec("batch_to_space_nd", lambda tf, x: tf.batch_to_space_nd(x, [2, 2], [[0, 1], [1, 0]]),
           (Input((8, 2, 3, 1)),)),
    OpSpec("space_to_batch", lambda tf, x: tf.space_to_batch(x, [[1, 1], [0, 2]], block_size=2), (IMG,)),
    OpSpec("batch_to_space", lambda tf, x: tf.batch_to_space(x, [[0, 0], [1, 1]], block_size=2),
           (Input((4, 2, 3, 2)),)),
    OpSpec("searchsorted/left", lambda tf, s, v: tf.searchsorted(s, v), (
        Input(maker=lambda r: np.sort(r.uniform(0, 4, (2, 5)), axis=1)), Input((2, 3), low=0, high=4)),
        reference=lambda s, v: np.stack([np.searchsorted(s[i], v[i]) for i in range(2)]).astype(np.int32)),
    OpSpec("searchsorted/right_int", lambda tf, s, v: tf.searchsorted(s, v, side="right", out_type=tf.int64), (
        Input(maker=lambda r: np.array([1, 2, 2, 4, 7])), Input(maker=lambda r: np.array([2, 0, 7, 9]))),
        reference=lambda s, v: np.searchsorted(s, v, side="right")),
    OpSpec("setdiff1d", lambda tf, x, y: tf.setdiff1d(x, y), (INTS, Input((3,), "int32", 0, 6, kind="int")),
           dynamic=False),
    OpSpec("bincount", lambda tf, x: tf.math.bincount(x), (INTS,), reference=lambda x: np.bincount(x)),
    OpSpec("bincount/weights_min_max", lambda tf, x, w: tf.math.bincount(x, w, minlength=9, maxlength=4),
           (INTS, Input((7,))), grad=False),
    OpSpec("unravel_index", lambda tf, x: tf.unravel_index(x, [3, 4]), (Input((5,), "int32", 0, 12, kind="int"),),
           reference=lambda x: np.stack(np.unravel_index(x, (3, 4))).astype(np.int32)),
    OpSpec("confusion_matrix", lambda tf, a, b: tf.math.confusion_matrix(a, b, num_classes=6), (INTS, INTS),
           dynamic=False),
    OpSpec("confusion_matrix/weights", lambda tf, a, b, w: tf.math.confusion_matrix(a, b, 6, tf.float32, weights=w),
           (INTS, INTS, Input((7,))), grad=False, dynamic=False),
    OpSpec("lbeta", lambda tf, x: tf.lbeta(x), (Input((2, 3), low=0.5, high=3.0),),
           reference=lambda x: (torch.lgamma(torch.from_numpy(x)).sum(-1)
                                  - torch.lgamma(torch.from_numpy(x).sum(-1))).numpy()),
    OpSpec("reciprocal_no_nan", lambda tf, x: tf.math.reciprocal_no_nan(x),
           (Input((2, 3), low=0.5, high=2.0, kind="nonzero"),), reference=lambda x: 1 / x),
    OpSpec("xlog1py", lambda tf, x, y: tf.math.xlog1py(x, y),
           (Input((2, 3), low=0.5, high=2.0), Input((2, 3), low=0.1, high=2.0)), reference=lambda x, y: x * np.log1p(y)),
    OpSpec("polyval", lambda tf, x: tf.math.polyval([2.0, -1.0, 0.5], x), (Input((4,)),),
           reference=lambda x: np.polyval([2.0, -1.0, 0.5], x), second_order=True),
    OpSpec("cumulative_logsumexp", lambda tf, x: tf.math.cumulative_logsumexp(x, axis=1), (Input((2, 4)),),
           reference=lambda x: np.logaddexp.accumulate(x, axis=1)),
    OpSpec("cumulative_logsumexp/reverse", lambda tf, x: tf.math.cumulative_logsumexp(x, reverse=True),
           (Input((5,)),)),
    OpSpec("arg_max", lambda tf, x: tf.arg_max(x, 1), (Input((3, 4), kind="distinct"),),
           reference=lambda x: np.argmax(x, 1)),
    OpSpec("arg_min", lambda tf, x: tf.arg_min(x, 0, output_type=tf.int32), (Input((3, 4), kind="distinct"),),
           reference=lambda x: np.argmin(x, 0).astype(np.int32)),
    OpSpec("floor_div", lambda tf, a, b: tf.floor_div(a, b),
           (Input((4,), "int32", -9, 9, kind="int"), Input(dtype="int32", maker=lambda r: np.array([2, -3, 4, 5])))),
    OpSpec("to_complex64", lambda tf, x: tf.real(tf.to_complex64(x)) if hasattr(tf, "real") else
           tf.cast(tf.to_complex64(x), tf.float32), (Input((3,)),), grad=False, oracle=False,
           reference=lambda x: x),
    OpSpec("identity_n", lambda tf, a, b: tf.identity_n([a, b]), (Input((2,)), Input((3,)))),
    OpSpec("unsorted_segment_mean", lambda tf, x: tf.unsorted_segment_mean(x, [0, 2, 0], 3), (Input((3, 2)),)),
    OpSpec("erfinv", lambda tf, x: tf.math.erfinv(x), (Input((2, 3), low=-0.9, high=0.9),),
           reference=lambda x: torch.special.erfinv(torch.from_numpy(x)).numpy(), second_order=True),
    OpSpec("ndtri", lambda tf, x: tf.math.ndtri(x), (Input((2, 3), low=0.05, high=0.95),),
           reference=lambda x: torch.special.ndtri(torch.from_numpy(x)).numpy()),
    OpSpec("erfcinv", lambda tf, x: tf.math.erfcinv(x), (Input((2, 3), low=0.1, high=1.9),)),
    OpSpec("approx_max_k/math", lambda tf, x: tf.math.approx_max_k(x, 2), (Input((2, 5), kind="distinct"),),
           oracle=False, reference=lambda x: [np.sort(x, 1)[:, ::-1][:, :2], np.argsort(-x, 1)[:, :2].astype(np.int32)]),
    OpSpec("log_sigmoid", lambda tf, x: tf.log_sigmoid(x), (Input((4,)),), reference=lambda x: -np.logaddexp(0, -x)),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_compat_op(spec):
    OpHarness(spec).check()


ORACLE = [s for s in SPECS if s.oracle]


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE, ids=spec_ids(ORACLE))
def test_compat_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_static_helpers():
    import flowmesh as tf

    with tf.Graph().as_default():
        c = tf.constant([1, 2])
        assert tf.get_static_value(c).tolist() == [1, 2]
        assert tf.get_static_value(tf.placeholder(tf.int32)) is None
        assert tf.dimension_value(tf.TensorShape([3, None])[0]) == 3
        assert tf.dimension_at_index(tf.TensorShape([3, None]), 1).value is None
        assert tf.is_tensor(c) and not tf.is_tensor(np.ones(2))
        assert tf.initialize_variables([]).type == "NoOp"
        assert tf.resource_variables_enabled() and tf.control_flow_v2_enabled() and tf.no_regularizer(1.0) is None
        assert tf.graph_util.import_graph_def is tf.import_graph_def and tf.dtypes.complex is tf.complex
        assert tf.UnconnectedGradients.ZERO.value == "zero" and tf.GRAPH_DEF_VERSION > 0
        with pytest.raises(tf.errors.UnimplementedError, match="control-flow"):
            tf.disable_control_flow_v2()
        x = tf.placeholder(tf.float32)
        assert tf.gradients(tf.constant(1.0), x, unconnected_gradients=tf.UnconnectedGradients.ZERO.value)[0] \
            is not None
        with pytest.raises(tf.errors.InvalidArgumentError, match="divisible by block_size"):
            tf.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)
